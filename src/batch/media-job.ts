// The worker of the media queue: one job, one source, its outputs. The source is fetched (or read back from the
// destination, for an upload) once, with every digest asked for computed as it streams in; each output is made by
// the routes' own job functions through the pool, only on capacity requests leave (capacity.ts), and written whole;
// a retry skips the outputs an earlier attempt wrote (progress.ts); manifest.json is written last, so a reader
// that finds it knows the job is done.
import type { FastifyInstance } from 'fastify'
import { spool, type SpooledSource } from '../sources/spool.ts'
import type { Config } from '../config.ts'
import type { Stores } from '../stores/registry.ts'
import { errors } from '../errors.ts'
import type { Capacity } from './capacity.ts'
import { openDestination, type Destination } from './destination.ts'
import type { Engine } from './engine.ts'
import { isPermanent, jobError, type JobError } from './failures.ts'
import { makeOutput, wantedDigests, type RunStep } from './outputs.ts'
import { forgetProgress, readProgress, recordOutput, type OutputRecord, type WrittenFile } from './progress.ts'
import type { MediaJobData } from './spec.ts'
import { videoSetSteps } from './video-set.ts'

export const MANIFEST = 'manifest.json'
/** Where an upload waits for its job, under the destination; removed when the job ends. */
export const uploadName = (id: string) => `.thumbd-upload-${id}`

export interface JobResult {
  state: 'done' | 'failed'
  outputs: OutputRecord[]
  manifest?: WrittenFile
  error?: JobError
}

export interface MediaJobContext {
  app: FastifyInstance
  config: Config
  engine: Engine
  capacity: Capacity
}

export interface Attempt {
  id: string
  data: MediaJobData
  signal: AbortSignal
}

/** Runs one attempt. Throws a failure a retry may mend; answers a result (done, or failed for good) otherwise. */
export async function runMediaJob ({ app, config, engine, capacity }: MediaJobContext, { id, data, signal }: Attempt): Promise<JobResult> {
  let destination: Destination
  let source: SpooledSource
  try {
    destination = await openDestination(data.destination, config.jobsDestinationRoot, app.stores)
    // An attempt that wrote the manifest and died before the engine heard of it: the job is done, as written.
    const done = await writtenManifest(destination, id)
    if (done !== undefined) return done
    source = await takeSource(app, config, data, destination, signal)
  } catch (err) {
    if (isPermanent(err)) return { state: 'failed', outputs: [], error: jobError(err) }
    throw err
  }
  try {
    const records = await readProgress(engine, id)
    const written = new Set(records.map(r => r.name))
    const run: RunStep = task => capacity.run(task, signal)
    // A video's outputs that decode frames share one probe and one decode pass, in one step.
    const stepOf = videoSetSteps(data.outputs.filter(o => !written.has(o.name)), source, run, signal, config.jobTimeoutMs)
    for (const output of data.outputs) {
      if (written.has(output.name)) continue
      let record: OutputRecord
      try {
        const files = await makeOutput(output, source, stepOf(output.name), () => app.mediaTools.assertVideo())
        const stored: WrittenFile[] = []
        for (const { file, bytes, contentType } of files) {
          const { size, etag } = await destination.store.write(destination.at(file), bytes, { contentType, metadata: { 'thumbd-job': id }, signal })
          stored.push({ location: destination.url(file), size, ...(etag === undefined ? {} : { etag }), contentType })
        }
        record = { name: output.name, kind: output.kind, files: stored }
      } catch (err) {
        // An output its source cannot give (a storyboard of a photo) is that output's error, not the job's.
        if (!isPermanent(err) || signal.aborted) throw err
        record = { name: output.name, kind: output.kind, error: jobError(err) }
      }
      await recordOutput(engine, id, record)
      records.push(record)
    }
    const outputs = data.outputs.map(o => records.find(r => r.name === o.name)!)
    const manifest = Buffer.from(JSON.stringify({ id, state: 'done', outputs }, null, 2) + '\n')
    const { size, etag } = await destination.store.write(destination.at(MANIFEST), manifest, { contentType: 'application/json', metadata: { 'thumbd-job': id }, signal })
    return { state: 'done', outputs, manifest: { location: destination.url(MANIFEST), size, ...(etag === undefined ? {} : { etag }), contentType: 'application/json' } }
  } finally {
    await source.dispose()
  }
}

/** What a job leaves behind once it ended, whichever way: its upload and its progress row. */
export async function cleanUp (config: Config, stores: Stores, engine: Engine, id: string, data: MediaJobData) {
  if ('upload' in data.source) {
    const destination = await openDestination(data.destination, config.jobsDestinationRoot, stores)
    await destination.store.remove(destination.at(data.source.upload))
  }
  await forgetProgress(engine, id)
}

async function writtenManifest (destination: Destination, id: string): Promise<JobResult | undefined> {
  const location = destination.at(MANIFEST)
  if (await destination.store.stat(location) === undefined) return undefined
  const chunks: Buffer[] = []
  for await (const chunk of (await destination.store.read(location)).body) chunks.push(chunk as Buffer)
  const manifest = JSON.parse(Buffer.concat(chunks).toString()) as { id?: string, outputs: OutputRecord[] }
  // Another job's manifest (a destination used twice) is overwritten, not taken.
  return manifest.id === id ? { state: 'done', outputs: manifest.outputs } : undefined
}

async function takeSource (app: FastifyInstance, config: Config, data: MediaJobData, destination: Destination, signal: AbortSignal): Promise<SpooledSource> {
  const algorithms = wantedDigests(data.outputs)
  if ('url' in data.source) {
    // Downloaded whole (never read by ranges): every output reads it, and its digests need every byte.
    for (;;) {
      try {
        return await app.sources.fetchUrl(data.source.url, signal, { algorithms })
      } catch (err) {
        // All MAX_CONCURRENT_FETCHES taken by requests: they go first; the job tries again in a moment.
        if (!(err instanceof errors.Overloaded) || signal.aborted) throw err
        await new Promise(resolve => setTimeout(resolve, 200))
      }
    }
  }
  const answer = await destination.store.read(destination.at(data.source.upload), { signal })
  return spool(answer.body, { maxBytes: config.maxSourceBytes, memoryBytes: config.memorySpoolBytes, tempDir: app.tempDir, runDigestTask: app.runDigestTask, algorithms, signal })
}
