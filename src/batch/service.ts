// What the job routes do, on the engine: enqueue, read a job's state, cancel. Nothing is kept here: a job's request
// is its data in the engine, its progress a row beside it (progress.ts), its result the engine's output.
import { createReadStream } from 'node:fs'
import type { JobWithMetadata } from 'pg-boss'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { checkSourceUrl, type SourcePolicy } from '../sources/url-policy.ts'
import type { SpooledSource } from '../sources/spool.ts'
import { isStoreUrl, parseStoreUrl } from '../stores/location.ts'
import type { Stores } from '../stores/registry.ts'
import { announce } from './announce.ts'
import { openDestination } from './destination.ts'
import { MEDIA_QUEUE, type Engine } from './engine.ts'
import type { JobError } from './failures.ts'
import { derivedId, isUuid, newJobId } from './ids.ts'
import { cleanUp, uploadName, type JobResult } from './media-job.ts'
import { readProgress, type OutputRecord, type WrittenFile } from './progress.ts'
import { fingerprint, namedOutputs, type JobRequest, type MediaJobData } from './spec.ts'

export type JobState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled'

export interface JobStatus {
  id: string
  state: JobState
  attempts: number
  progress: { done: number, total: number }
  createdAt: string
  startedAt?: string
  completedAt?: string
  outputs: OutputRecord[]
  manifest?: WrittenFile
  error?: JobError
}

export interface Submission {
  owner: string
  request: Omit<JobRequest, 'source'> & { source?: JobRequest['source'] }
  idempotencyKey?: string
  /** An upload, spooled by the route: copied to the destination before the job is queued. */
  upload?: SpooledSource
}

export function createJobService (config: Config, policy: SourcePolicy, stores: Stores, engine: () => Promise<Engine>, checkWebhook: (url: string) => void) {
  async function submit ({ owner, request, idempotencyKey, upload }: Submission): Promise<{ id: string, created: boolean }> {
    const outputs = namedOutputs(request.outputs)
    const destination = await openDestination(request.destination, config.jobsDestinationRoot, stores)
    if (request.webhook !== undefined) {
      if (config.webhookSigningKeys.length === 0) throw new errors.BadOptions('webhooks need WEBHOOK_SIGNING_KEYS set on the server')
      checkWebhook(request.webhook.url)
    }
    if (upload === undefined && request.source === undefined) throw new errors.BadOptions('a job needs a source: {"source": {"url": ...}} or an upload')
    // A store URL is checked when the job fetches it (the store's policy: a refusal fails the job at once).
    if (request.source !== undefined) {
      if (isStoreUrl(request.source.url)) parseStoreUrl(request.source.url)
      else checkSourceUrl(request.source.url, policy)
    }
    const sha256 = upload?.digests.sha256
    if (upload !== undefined && sha256 === undefined) throw new Error('an upload is spooled with its SHA-256')
    const print = fingerprint({ source: request.source ?? { sha256: sha256! }, destination: request.destination, outputs, webhook: request.webhook?.url })
    const id = idempotencyKey === undefined ? newJobId() : derivedId('idempotency', owner, idempotencyKey)
    const { boss } = await engine()

    const same = async () => {
      const existing = await boss.getJobById<MediaJobData>(MEDIA_QUEUE, id)
      if (existing === null) return false
      if (existing.data.owner !== owner || existing.data.fingerprint !== print) throw new errors.JobConflict('this key was used for another job')
      return true
    }
    if (idempotencyKey !== undefined && await same()) return { id, created: false }
    let source: MediaJobData['source']
    if (upload === undefined) {
      source = { url: request.source!.url }
    } else {
      // Kept where the job's worker, on any replica, can read it: beside its outputs, until the job ends.
      const ref = upload.ref
      const body = ref.location === 'memory' ? Buffer.from(ref.bytes.buffer, ref.bytes.byteOffset, ref.bytes.byteLength) : ref.location === 'file' ? createReadStream(ref.path) : undefined
      if (body === undefined) throw new errors.UnsupportedMedia('not an image or video format thumbd reads')
      await destination.store.write(destination.at(uploadName(id)), body, { contentType: upload.media?.mime ?? 'application/octet-stream' })
      source = { upload: uploadName(id), sha256: sha256! }
    }
    const data: MediaJobData = { owner, fingerprint: print, source, destination: request.destination, outputs, ...(request.webhook === undefined ? {} : { webhook: request.webhook.url }) }
    const sent = await boss.send(MEDIA_QUEUE, data as unknown as object, { id })
    // Sent twice at once under one key: the other request made it; it must be the same request.
    if (sent === null && !(await same())) throw new errors.JobConflict('this key was used for another job')
    return { id, created: sent !== null }
  }

  async function find (owner: string, id: string): Promise<JobWithMetadata<MediaJobData>> {
    if (!isUuid(id)) throw new errors.JobNotFound(id)
    const { boss } = await engine()
    const job = await boss.getJobById<MediaJobData>(MEDIA_QUEUE, id)
    if (job === null || job.data.owner !== owner) throw new errors.JobNotFound(id)
    return job
  }

  async function status (owner: string, id: string): Promise<JobStatus> {
    const job = await find(owner, id)
    const total = job.data.outputs.length
    const base = {
      id,
      attempts: job.retryCount + (job.state === 'created' ? 0 : 1),
      createdAt: new Date(job.createdOn).toISOString(),
      ...(job.startedOn == null ? {} : { startedAt: new Date(job.startedOn).toISOString() }),
      ...(job.completedOn == null ? {} : { completedAt: new Date(job.completedOn).toISOString() })
    }
    if (job.state === 'completed' || job.state === 'failed') {
      const result = resultOf(job.output)
      const outputs = result?.outputs ?? []
      return { ...base, state: job.state === 'completed' ? result?.state ?? 'done' : 'failed', progress: { done: outputs.length, total }, outputs, ...(result?.manifest === undefined ? {} : { manifest: result.manifest }), ...(result?.error === undefined ? {} : { error: result.error }) }
    }
    const outputs = await readProgress(await engine(), id)
    const state: JobState = job.state === 'cancelled' ? 'cancelled' : job.state === 'active' ? 'running' : 'queued'
    return { ...base, state, progress: { done: outputs.length, total }, outputs }
  }

  async function cancel (owner: string, id: string): Promise<JobStatus> {
    const job = await find(owner, id)
    if (job.state !== 'completed' && job.state !== 'failed' && job.state !== 'cancelled') {
      const e = await engine()
      await e.boss.cancel(MEDIA_QUEUE, id)
      // A running attempt stops at its next lease renewal (its signal aborts); what it wrote stays, and the
      // webhook says so (the attempt, aborted, announces nothing).
      await announce(e.boss, id, job.data.webhook, { state: 'cancelled', outputs: await readProgress(e, id) })
      await cleanUp(config, stores, e, id, job.data)
    }
    return status(owner, id)
  }

  return { submit, status, cancel }
}

/** The engine's output of an ended job: our result, or (a thrown failure, after its last attempt) an error of pg-boss's form. */
function resultOf (output: unknown): JobResult | undefined {
  if (output === null || typeof output !== 'object') return undefined
  if ('state' in output) return output as JobResult
  const { code, message } = output as { code?: unknown, message?: unknown }
  const ours = typeof code === 'string' && code.startsWith('THUMBD_') && code !== 'THUMBD_INTERNAL'
  return { state: 'failed', outputs: [], error: ours ? { code, message: String(message) } : { code: 'THUMBD_INTERNAL', message: 'Internal error' } }
}

export type JobService = ReturnType<typeof createJobService>
