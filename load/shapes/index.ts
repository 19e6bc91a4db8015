// The server shapes compared by --compare: the same app, started by different entry files with different env.
// The product is src/server.ts in pool mode; the others live beside this file and exist to be measured.
import { fileURLToPath } from 'node:url'

export interface Shape {
  name: string
  env: Record<string, string>
  /** The script node runs (default: the product, src/server.ts). */
  entry?: string
}

const SHAPE = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export function compareShapes (cores: number): Shape[] {
  const n = String(cores)
  return [
    { name: 'single (inline)', env: { EXECUTION_MODE: 'inline' } },
    { name: 'cluster', env: { EXECUTION_MODE: 'inline', CLUSTER_WORKERS: n }, entry: SHAPE('cluster.ts') },
    { name: 'pool', env: { EXECUTION_MODE: 'pool' } },
    { name: 'cluster x pool', env: { EXECUTION_MODE: 'pool', CLUSTER_WORKERS: n }, entry: SHAPE('cluster.ts') },
    { name: 'server threads', env: { EXECUTION_MODE: 'inline', SERVER_THREADS: n }, entry: SHAPE('server-threads.ts') }
  ]
}

export const DEFAULT_SHAPE: Shape = { name: 'pool', env: { EXECUTION_MODE: 'pool' } }
