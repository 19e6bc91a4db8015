// /health is for load balancers (can this instance do all its jobs?), /health/live for liveness
// (does the event loop answer?). Neither needs a key, so neither says which ffmpeg build or sandbox this host
// has (an attacker's map of what applies here): /metrics and the start log do (docs/security.md).
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'

const LOOP_WINDOW_MS = 10_000
const LOOP_RESOLUTION_MS = 10
/** The histogram records whole sampling intervals; the delay is what exceeds the interval. */
const excessMs = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS)

const HealthReply = Type.Object({
  status: Type.Enum(['ok', 'unavailable']),
  problems: Type.Array(Type.String(), { description: 'why this instance should leave the rotation' }),
  pool: Type.Object({
    mode: Type.Enum(['pool', 'inline']),
    threads: Type.Integer(),
    queued: Type.Integer(),
    running: Type.Integer(),
    utilization: Type.Number(),
    completed: Type.Integer(),
    ffmpegChildren: Type.Integer()
  }),
  expectedWaitMs: Type.Number({ description: 'expected wait of a newly admitted job' }),
  eventLoopDelayMs: Type.Object({ p50: Type.Number(), p99: Type.Number(), max: Type.Number() }, { description: 'over the last 10 s' }),
  uptimeSeconds: Type.Integer()
})

const routes: FastifyPluginAsync = async (app) => {
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  loop.enable()
  // Figures over a recent window, not since start.
  const reset = setInterval(() => loop.reset(), LOOP_WINDOW_MS).unref()
  app.addHook('onClose', async () => { clearInterval(reset); loop.disable() })

  app.get('/health', {
    schema: {
      summary: 'Readiness for load balancers: 503 while draining or unable to do all its jobs',
      tags: ['health'],
      response: { 200: HealthReply, 503: HealthReply }
    }
  }, async (_request, reply) => {
    const pool = app.jobs.stats()
    const problems = app.mediaTools.missing.map(tool => `${tool} not found: video jobs unavailable`)
    if (pool.mode === 'pool' && pool.threads === 0) problems.push('no worker threads')
    if (app.draining) problems.push('draining: shutting down')
    return reply.code(problems.length === 0 ? 200 : 503).send({
      status: problems.length === 0 ? 'ok' : 'unavailable',
      problems,
      pool,
      expectedWaitMs: app.admission.expectedWaitMs(),
      eventLoopDelayMs: { p50: excessMs(loop.percentile(50)), p99: excessMs(loop.percentile(99)), max: excessMs(loop.max) },
      uptimeSeconds: Math.round(process.uptime())
    })
  })

  app.get('/health/live', {
    schema: { summary: 'Liveness: 200 while the event loop answers', tags: ['health'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } }
  }, async () => ({ status: 'ok' as const }))
}

export default routes
