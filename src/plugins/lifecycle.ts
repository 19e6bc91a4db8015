// Draining at shutdown. The listener stays open while in-flight requests finish, so late clients get a
// clear 503 DRAINING (and load balancers a 503 /health) instead of a refused connection.
// Also each job request's client-gone signal, which cancels its job.
import { finished } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errors } from '../errors.ts'
import type { RunOptions } from './jobs.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Job routes: aborts when the client goes away before its reply is complete. */
    clientGone: AbortSignal
    /** What job routes hand to jobs.run. */
    jobOptions: RunOptions
  }
  interface FastifyInstance {
    draining: boolean
    /** onRequest hook for job routes: refuses new work while draining, counts the work accepted. */
    admitWhileRunning (request: FastifyRequest, reply: FastifyReply): Promise<void>
    /** Stop taking jobs; resolves when accepted ones are done, or after graceMs. True if all finished. */
    drain (graceMs: number): Promise<boolean>
  }
}

export default fp(async (app) => {
  let accepted = 0
  let onIdle: (() => void) | undefined

  app.decorate('draining', false)
  app.decorateRequest('clientGone', null as unknown as AbortSignal)
  app.decorateRequest('jobOptions', null as unknown as RunOptions)

  app.decorate('admitWhileRunning', async (request: FastifyRequest, reply: FastifyReply) => {
    if (app.draining) {
      app.metrics.shed.inc({ reason: 'draining' })
      throw new errors.Draining()
    }
    accepted++
    const gone = new AbortController()
    request.clientGone = gone.signal
    request.jobOptions = { signal: gone.signal }
    finished(reply.raw, () => {
      if (!reply.raw.writableFinished) gone.abort(new Error('client disconnected'))
      if (--accepted === 0) onIdle?.()
    })
  })

  app.decorate('drain', async (graceMs: number) => {
    app.draining = true
    if (accepted === 0) return true
    return new Promise<boolean>(resolve => {
      const timer = setTimeout(() => resolve(false), graceMs)
      onIdle = () => { clearTimeout(timer); resolve(true) }
    })
  })
}, { name: 'lifecycle', dependencies: ['metrics'] })
