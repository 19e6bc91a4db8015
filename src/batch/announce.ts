// A job's end as its webhook tells it: `{"type": "job.<state>", "id", "state", "outputs", ...}`, queued on the
// engine's webhook queue (webhook.ts signs and delivers it) under an id derived from the job and its state, so
// each end is announced once, whatever the retries or the replica that ended it.
import type { PgBoss } from 'pg-boss'
import { WEBHOOK_QUEUE } from './engine.ts'
import { derivedId } from './ids.ts'
import type { JobError } from './failures.ts'
import type { OutputRecord, WrittenFile } from './progress.ts'
import type { WebhookTask } from './webhook.ts'

export interface JobEnd {
  state: 'done' | 'failed' | 'cancelled'
  outputs: OutputRecord[]
  manifest?: WrittenFile
  error?: JobError
}

export async function announce (boss: PgBoss, id: string, webhook: string | undefined, end: JobEnd): Promise<void> {
  if (webhook === undefined) return
  const body = JSON.stringify({ type: `job.${end.state}`, id, ...end })
  await boss.send(WEBHOOK_QUEUE, { url: webhook, body } satisfies WebhookTask, { id: derivedId('webhook', id, end.state) })
}
