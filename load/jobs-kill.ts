// npm run jobs-kill -- [--jobs N] [--replicas 3] [--concurrency 1]: the fault test of asynchronous jobs (issue #47).
// Three replicas (the product's own start, load/server-process.ts) share one PostgreSQL queue (a throwaway server
// from Debian's packages, scripts/postgres-server.ts) and one destination; N jobs of a short video (poster,
// 6-tile storyboard, 8-frame preview, hashes), each with a signed webhook to a loopback receiver; one replica is
// SIGKILLed once half the jobs are done. Reports: all done, each output present once and whole, webhooks delivered
// (duplicates counted, signatures checked), jobs per minute. The destination is a bucket of versitygw (the S3-compatible
// server of scripts/install-test-servers.sh) through the S3 store; without that server, a shared directory.
// Everything is on loopback; the run stops by itself.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import sharp from 'sharp'
import { startPostgres } from '../scripts/postgres-server.ts'
import { verify } from '../src/batch/webhook.ts'
import { startStaticServer } from './static-server.ts'
import { startServer, type ServerHandle } from './server-process.ts'
import { S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from '../test/stores/servers.ts'

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '200' }, replicas: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '1' }, 'time-limit': { type: 'string', default: '1800' } } })
const N = Number(values.jobs)
const REPLICAS = Number(values.replicas)
const LIMIT_MS = Number(values['time-limit']) * 1000
const EXPECTED = ['hashes.json', 'manifest.json', 'poster.jpg', 'preview.webp', 'storyboard.jpg', 'storyboard.vtt']

const work = mkdtempSync(join(tmpdir(), 'thumbd-jobs-kill-'))
const media = join(work, 'media')
const out = join(work, 'out')
execFileSync('mkdir', ['-p', media, out])
// A short video: 6 s, 640x360 H.264, as a phone clip's proxy.
execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', join(media, 'clip.mp4')])
const origin = await startStaticServer(media)
const pg = await startPostgres()
const signingKey = randomBytes(32).toString('hex')

// The webhook receiver: counts deliveries per job, checks each signature.
const hooks = new Map<string, number>()
let badSignatures = 0
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', c => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString()
    if (!verify(String(req.headers['thumbd-signature']), body, signingKey)) badSignatures++
    const { id } = JSON.parse(body) as { id: string }
    hooks.set(id, (hooks.get(id) ?? 0) + 1)
    res.writeHead(204).end()
  })
})
await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

// The shared destination: a bucket when versitygw is built here, else a directory every replica sees.
const cleanups: Array<() => unknown> = []
const s3 = existsSync(serverBinary('versitygw')) ? await startVersitygw({ after: fn => { cleanups.push(fn) } }) : undefined
const s3Endpoint = s3 === undefined ? '' : `http://127.0.0.1:${s3.port}`
const s3Env = { AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_EC2_METADATA_DISABLED: 'true', AWS_REGION: 'us-east-1' }
const client = s3 === undefined ? undefined : new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: S3_ACCESS, secretAccessKey: S3_SECRET } })
await client?.send(new CreateBucketCommand({ Bucket: 'jobs' }))
const destination = (i: number) => s3 === undefined ? `file://${out}/job-${i}` : `s3://jobs/job-${i}`

/** A job's files, by name, as its destination holds them. */
async function outputsOf (i: number): Promise<Map<string, Buffer>> {
  if (client === undefined) {
    const dir = join(out, `job-${i}`)
    return new Map(readdirSync(dir).map(file => [file, readFileSync(join(dir, file))]))
  }
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'jobs', Prefix: `job-${i}/` }))
  const files = new Map<string, Buffer>()
  for (const { Key } of listed.Contents ?? []) {
    const object = await client.send(new GetObjectCommand({ Bucket: 'jobs', Key }))
    files.set(Key!.slice(`job-${i}/`.length), Buffer.from(await object.Body!.transformToByteArray()))
  }
  return files
}

const apiKey = randomBytes(18).toString('base64url')
const env = {
  ...(s3 === undefined ? {} : { ...s3Env, USE_S3: 'true', S3_ENDPOINT: s3Endpoint, S3_FORCE_PATH_STYLE: 'true', S3_ALLOWED_BUCKETS: 'jobs' }),
  API_KEYS: apiKey,
  JOBS_QUEUE: pg.url,
  JOB_CONCURRENCY: values.concurrency!,
  JOB_LEASE_SECONDS: '10',
  JOBS_DESTINATION_ROOT: out,
  WEBHOOK_SIGNING_KEYS: signingKey,
  ALLOW_PRIVATE_SOURCES: 'true',
  ALLOWED_SOURCES: `${origin.base}/,${new URL(hookUrl).origin}/`,
  POOL_THREADS: '1'
}
const replicas: Array<ServerHandle & { alive: boolean }> = []
for (let i = 0; i < REPLICAS; i++) replicas.push({ ...await startServer(env), alive: true })
const live = () => replicas.filter(r => r.alive)
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }

const started = Date.now()
const ids: string[] = []
for (let i = 0; i < N; i++) {
  const body = JSON.stringify({
    source: { url: `${origin.base}/clip.mp4` },
    destination: destination(i),
    outputs: [{ kind: 'still', name: 'poster', at: '30%' }, { kind: 'storyboard', count: 6, columns: 3 }, { kind: 'preview', frames: 8 }, { kind: 'hashes' }],
    webhook: { url: hookUrl }
  })
  const target = live()[i % live().length]!
  const res = await fetch(`${target.base}/api/jobs`, { method: 'POST', headers: { ...headers, 'idempotency-key': `kill-${i}` }, body })
  if (res.status !== 202) throw new Error(`job ${i}: ${res.status} ${await res.text()}`)
  ids.push(((await res.json()) as { id: string }).id)
}
console.log(`${N} jobs submitted in ${((Date.now() - started) / 1000).toFixed(1)} s`)

const states = new Map<string, { state: string, attempts: number }>()
let killed: { at: number, pid: number } | undefined
while (Date.now() - started < LIMIT_MS) {
  const reader = live()[0]!
  for (const id of ids) {
    if (['done', 'failed', 'cancelled'].includes(states.get(id)?.state ?? '')) continue
    const res = await fetch(`${reader.base}/api/jobs/${id}`, { headers })
    const status = await res.json() as { state: string, attempts: number }
    states.set(id, status)
  }
  const ended = [...states.values()].filter(s => s.state === 'done' || s.state === 'failed').length
  if (killed === undefined && ended >= N / 2) {
    // The last replica, not the one this loop reads from: SIGKILL, no drain, no goodbye.
    const victim = replicas[REPLICAS - 1]!
    process.kill(victim.pid, 'SIGKILL')
    victim.alive = false
    killed = { at: Date.now(), pid: victim.pid }
    console.log(`replica ${victim.pid} SIGKILLed with ${ended}/${N} jobs ended`)
  }
  if (ended === N) break
  await new Promise(resolve => setTimeout(resolve, 1000))
}
const elapsedMs = Date.now() - started
// The last webhooks may still be on their way.
const hookDeadline = Date.now() + 30_000
while ([...ids].some(id => !hooks.has(id)) && Date.now() < hookDeadline) await new Promise(resolve => setTimeout(resolve, 500))

// Each job's outputs: exactly the expected files, each whole (decodes, parses), no temp or upload left over.
let whole = 0
const problems: string[] = []
for (let i = 0; i < N; i++) {
  const files = await outputsOf(i)
  const names = [...files.keys()].sort()
  if (JSON.stringify(names) !== JSON.stringify(EXPECTED)) { problems.push(`job-${i}: ${names.join(' ')}`); continue }
  try {
    for (const [name, bytes] of files) {
      if (name.endsWith('.json')) JSON.parse(bytes.toString())
      else if (name.endsWith('.vtt')) { if (!bytes.toString().startsWith('WEBVTT')) throw new Error('not a VTT') } else await sharp(bytes, { animated: true }).raw().toBuffer()
    }
    whole++
  } catch (err) {
    problems.push(`job-${i}: ${(err as Error).message}`)
  }
}
const done = [...states.values()].filter(s => s.state === 'done').length
const retried = [...states.values()].filter(s => s.attempts > 1).length
const delivered = ids.filter(id => hooks.has(id)).length
const duplicates = [...hooks.values()].reduce((sum, n) => sum + n - 1, 0)
console.log(JSON.stringify({
  jobs: N,
  replicas: REPLICAS,
  jobConcurrency: Number(values.concurrency),
  done,
  failed: [...states.values()].filter(s => s.state === 'failed').length,
  runAgainAfterTheKill: retried,
  outputsWholeAndOnce: whole,
  problems: problems.slice(0, 10),
  webhooksDelivered: delivered,
  webhookDuplicates: duplicates,
  badSignatures,
  destination: s3 === undefined ? 'a shared directory (versitygw not built here)' : 'an S3 bucket (versitygw, through the S3 store)',
  minutes: +(elapsedMs / 60_000).toFixed(2),
  jobsPerMinute: +(N / (elapsedMs / 60_000)).toFixed(1)
}, null, 2))

for (const replica of live()) await replica.stop()
receiver.close()
await origin.close()
await pg.stop()
client?.destroy()
await s3?.close()
for (const cleanup of cleanups.reverse()) await cleanup()
rmSync(work, { recursive: true, force: true })
process.exit(done === N && whole === N && delivered === N && badSignatures === 0 ? 0 : 1)
