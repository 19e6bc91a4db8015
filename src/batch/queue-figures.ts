// The queue's figures for /metrics, read from the engine's job table (pg-boss's own schema) a few times a minute:
// a scrape must not wait on a database, so the gauges show the last reading. Stale progress rows (of jobs that
// ended on a replica that died before removing them) are dropped on the same round.
import { ENGINE_SCHEMA, MEDIA_QUEUE, type Engine } from './engine.ts'

const STATE: Record<string, string> = { created: 'queued', retry: 'queued', active: 'running', completed: 'done', failed: 'failed', cancelled: 'cancelled' }

export interface QueueFigures {
  byState: Record<string, number>
  oldestQueuedSeconds: number
}

export async function readQueueFigures (engine: Engine): Promise<QueueFigures> {
  const rows = await engine.sql<{ state: string, n: string | number, oldest: string | number | null }>(
    `SELECT state::text AS state, count(*) AS n,
       extract(epoch FROM now() - min(created_on) FILTER (WHERE state < 'active')) AS oldest
     FROM ${ENGINE_SCHEMA}.job WHERE name = $1 GROUP BY state`, [MEDIA_QUEUE])
  const byState: Record<string, number> = { queued: 0, running: 0, done: 0, failed: 0, cancelled: 0 }
  let oldest = 0
  for (const row of rows) {
    const state = STATE[row.state]
    if (state !== undefined) byState[state] = byState[state]! + Number(row.n)
    if (row.oldest !== null) oldest = Math.max(oldest, Number(row.oldest))
  }
  return { byState, oldestQueuedSeconds: oldest }
}

export async function dropStaleProgress (engine: Engine) {
  await engine.sql(`DELETE FROM thumbd_progress.job p WHERE NOT EXISTS
    (SELECT 1 FROM ${ENGINE_SCHEMA}.job j WHERE j.id = p.id AND j.name = $1 AND j.state < 'completed')
    AND p.updated_on < now() - interval '1 hour'`, [MEDIA_QUEUE])
}
