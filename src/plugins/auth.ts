// Bearer keys for /api/*. Several keys live at once so they can be rotated. Both sides are hashed
// before a constant-time compare, so neither the key's content nor its length leaks through timing.
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
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
    const presented = digest(match?.[1] ?? '')
    // Compare with every key, no early exit.
    let ok = false
    for (const key of keys) ok = timingSafeEqual(key, presented) || ok
    if (match === null || !ok) throw new errors.Unauthorized()
  })
}, { name: 'auth' })
