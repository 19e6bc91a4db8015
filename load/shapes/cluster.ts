// The "cluster" comparison shape: node:cluster forks CLUSTER_WORKERS copies of the product (src/server.ts),
// each in EXECUTION_MODE, sharing PORT through the primary. Started by `npm run load -- --compare`, so that
// operators can measure it against the pool on their own hardware; to scale out, run more replicas instead.
import cluster, { type Worker } from 'node:cluster'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../src/config.ts'
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts'
import { log, shareGeneratedKey } from './primary.ts'

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))

const config = loadConfig()
shareGeneratedKey(config, 'cluster-primary')
cluster.setupPrimary({ exec: SERVER, execArgv: [...SERVER_NODE_FLAGS] })
let stopping = false
cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
  if (stopping) return
  log('cluster-primary', 'a cluster worker died; forking another', { worker: worker.process.pid, code, signal })
  cluster.fork()
})
for (let i = 0; i < Math.max(1, config.clusterWorkers); i++) cluster.fork()

async function stop (signal: NodeJS.Signals) {
  if (stopping) return
  stopping = true
  log('cluster-primary', 'draining the cluster', { signal })
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
  // Each worker drains itself on SIGTERM (src/server.ts), then exits.
  await Promise.all(workers.map(async w => { const exited = once(w, 'exit'); w.process.kill('SIGTERM'); await exited }))
  log('cluster-primary', 'closed')
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
