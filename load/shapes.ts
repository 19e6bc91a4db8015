// The server shapes compared by --compare: same code, started with different env.
export interface Shape {
  name: string
  env: Record<string, string>
}

export function compareShapes (cores: number): Shape[] {
  const n = String(cores)
  return [
    { name: 'single (inline)', env: { EXECUTION_MODE: 'inline' } },
    { name: 'cluster', env: { EXECUTION_MODE: 'inline', CLUSTER_WORKERS: n } },
    { name: 'pool', env: { EXECUTION_MODE: 'pool' } },
    { name: 'cluster x pool', env: { EXECUTION_MODE: 'pool', CLUSTER_WORKERS: n } },
    { name: 'server threads', env: { EXECUTION_MODE: 'inline', SERVER_THREADS: n } }
  ]
}

export const DEFAULT_SHAPE: Shape = { name: 'pool', env: { EXECUTION_MODE: 'pool' } }
