// SERVER_THREADS=N: N worker threads each run the whole app (usually EXECUTION_MODE=inline) and listen on
// the same PORT with SO_REUSEPORT, so the kernel spreads connections over them. Node cannot hand one listening
// handle to worker threads, and several event loops polling one shared fd would race on accept(); separate
// sockets on one port is the clean form of "threads sharing the listener". For measuring only.
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import type { Config } from '../config.ts'
import { shareGeneratedKey } from '../config.ts'

export const SHUTDOWN_MESSAGE = 'thumbd:shutdown'

const log = (msg: string, extra: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, role: 'server-threads-primary', ...extra, msg }))

export async function runServerThreads (config: Config): Promise<void> {
  // Workers copy the environment when created, so the key must be in it first.
  shareGeneratedKey(config)
  if (config.apiKeyGenerated) log(`API_KEYS is not set: this run accepts the generated key ${config.apiKeys[0]}`)
  const entry = new URL('../server.ts', import.meta.url)
  const threads = Array.from({ length: config.serverThreads }, () => new Worker(entry))
  let stopping = false
  for (const thread of threads) {
    thread.on('error', err => log('a server thread failed', { err: String(err) }))
  }
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log('draining the server threads', { signal })
    await Promise.all(threads.map(async t => { const exited = once(t, 'exit'); t.postMessage(SHUTDOWN_MESSAGE); await exited }))
    log('closed')
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
