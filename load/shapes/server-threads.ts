// The "server threads" comparison shape: SERVER_THREADS (default: one per core) worker threads each run the
// whole app (usually EXECUTION_MODE=inline) and listen on the same PORT with SO_REUSEPORT, so the kernel
// spreads connections over them. Node cannot hand one listening handle to worker threads, and several event
// loops polling one shared fd would race on accept(); separate sockets on one port is the clean form of
// "threads sharing the listener". Started by `npm run load -- --compare`; for measuring only.
import { once } from 'node:events'
import { availableParallelism } from 'node:os'
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import type { FastifyListenOptions } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { applyRuntimeDefaults, loadConfig } from '../../src/config.ts'
import { log, shareGeneratedKey } from './primary.ts'

const SHUTDOWN_MESSAGE = 'thumbd:shutdown'
const config = loadConfig()

if (isMainThread) {
  if (config.port === 0) throw new Error('server threads need a fixed PORT (they share it with SO_REUSEPORT)')
  // Worker threads copy the environment when created, so the key must be in it first.
  shareGeneratedKey(config, 'server-threads-primary')
  applyRuntimeDefaults(config)
  const count = Number(process.env.SERVER_THREADS ?? availableParallelism())
  const threads = Array.from({ length: count }, () => new Worker(new URL(import.meta.url)))
  for (const thread of threads) thread.on('error', err => log('server-threads-primary', 'a server thread failed', { err: String(err) }))
  let stopping = false
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log('server-threads-primary', 'draining the server threads', { signal })
    await Promise.all(threads.map(async t => { const exited = once(t, 'exit'); t.postMessage(SHUTDOWN_MESSAGE); await exited }))
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
} else {
  const app = await buildApp(config)
  parentPort?.once('message', async message => {
    if (message !== SHUTDOWN_MESSAGE) return
    await app.drain(config.shutdownGraceMs)
    await app.close()
    process.exit(0)
  })
  // Fastify hands these options to net's server.listen(), which knows reusePort (Fastify's type does not yet).
  const listenOptions: FastifyListenOptions & { reusePort?: boolean } = { port: config.port, host: config.host, reusePort: true }
  await app.listen(listenOptions)
}
