// A running job's progress: which outputs are written, where, with their size and ETag. pg-boss keeps a job's
// result only once it ends (and lets a job's data change only while it waits), so each running job has one row
// here, in the engine's own database: it survives a restart, every replica sees it, and a retry skips the
// outputs an earlier attempt already wrote. The row goes when the job ends; its result then holds the same.
import type { Engine } from './engine.ts'

export interface WrittenFile {
  location: string
  size: number
  etag?: string
  contentType: string
}

export interface OutputRecord {
  name: string
  kind: string
  files?: WrittenFile[]
  error?: { code: string, message: string }
}

const SCHEMA = 'thumbd_progress'

export async function createProgressTable (engine: Engine) {
  await engine.sql(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`).catch(() => {})
  await engine.sql(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.job (id uuid PRIMARY KEY, outputs jsonb NOT NULL, updated_on timestamptz NOT NULL DEFAULT now())`).catch(async (err) => {
    // Two replicas starting at once race to create it; the loser finds it made.
    if ((await engine.sql(`SELECT to_regclass('${SCHEMA}.job') AS t`))[0]?.t == null) throw err
  })
}

export async function readProgress (engine: Engine, id: string): Promise<OutputRecord[]> {
  const rows = await engine.sql<{ outputs: OutputRecord[] | string }>(`SELECT outputs FROM ${SCHEMA}.job WHERE id = $1`, [id])
  const outputs = rows[0]?.outputs
  return outputs === undefined ? [] : typeof outputs === 'string' ? JSON.parse(outputs) : outputs
}

export async function recordOutput (engine: Engine, id: string, record: OutputRecord) {
  await engine.sql(
    `INSERT INTO ${SCHEMA}.job (id, outputs) VALUES ($1, jsonb_build_array($2::jsonb))
     ON CONFLICT (id) DO UPDATE SET outputs = ${SCHEMA}.job.outputs || jsonb_build_array($2::jsonb), updated_on = now()`,
    [id, JSON.stringify(record)])
}

export async function forgetProgress (engine: Engine, id: string) {
  await engine.sql(`DELETE FROM ${SCHEMA}.job WHERE id = $1`, [id])
}
