// CLUSTER_WORKERS=N: node:cluster forks N copies of the server, each in EXECUTION_MODE. Kept so operators can
// measure it against the pool on their own hardware; to scale out, run more replicas instead.
import cluster, { type Worker } from 'node:cluster'
import { once } from 'node:events'
import type { Config } from '../config.ts'
import { shareGeneratedKey } from '../config.ts'

const log = (msg: string, extra: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, role: 'cluster-primary', ...extra, msg }))

export async function runCluster (config: Config): Promise<void> {
  shareGeneratedKey(config)
  if (config.apiKeyGenerated) log(`API_KEYS is not set: this run accepts the generated key ${config.apiKeys[0]}`)
  let stopping = false
  const fork = () => cluster.fork()
  cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
    if (stopping) return
    log('a cluster worker died; forking another', { worker: worker.process.pid, code, signal })
    fork()
  })
  for (let i = 0; i < config.clusterWorkers; i++) fork()

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log('draining the cluster', { signal })
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
    // Each worker drains itself on SIGTERM (see server.ts), then exits.
    await Promise.all(workers.map(async w => { const exited = once(w, 'exit'); w.process.kill('SIGTERM'); await exited }))
    log('closed')
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
