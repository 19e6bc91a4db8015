// Bearer keys for /api/*. Several keys live at once so they can be rotated. Both sides are hashed
// before a constant-time compare, so neither the key's content nor its length leaks through timing. A refusal
// says which mistake it was (no header, a header not "Bearer <key>", a key not configured), never a key.
import { hash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook for the routes that need a key. */
    authenticate (request: FastifyRequest): Promise<void>
  }
}

// One-shot hash(): no Hash object per request.
const digest = (key: string) => hash('sha256', key, 'buffer')

export default fp<{ config: Config }>(async (app, { config }) => {
  const keys = config.apiKeys.map(digest)

  app.decorate('authenticate', async (request: FastifyRequest) => {
    const header = request.headers.authorization
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
    const presented = digest(match?.[1] ?? '')
    // Compare with every key, no early exit.
    let ok = false
    for (const key of keys) ok = timingSafeEqual(key, presented) || ok
    if (match !== null && ok) return
    // Which of the three mistakes it was (the header's form is no secret); never the header or a key itself.
    throw new errors.Unauthorized(header === undefined
      ? 'no Authorization header: send "Authorization: Bearer <key>", a key of API_KEYS'
      : match === null
        ? 'the Authorization header is not of the form "Bearer <key>" (one word after "Bearer ")'
        : 'the key is not one of this server\'s API_KEYS')
  })
}, { name: 'auth' })
