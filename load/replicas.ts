// npm run load:replicas: 3 thumbd replicas behind HAProxy, sharing one result store (RESULT_STORAGE) on a real
// S3-compatible server (versitygw, from scripts/install-test-servers.sh) and in a shared directory. 300 GETs
// of 30 distinct signed URLs go through the balancer; the report gives, per URL, how many jobs ran across all
// replicas (the origin counts one fetch per job; the replicas' /metrics give the total), the latency of hits
// against misses, and each replica's idle memory. Then a fourth replica, its memo off, answers every URL
// again straight from the store: a hit's own latency on loopback.
//   npm run load:replicas [-- --store file|s3|both] [--requests 300] [--urls 30] [--connections 12] [--memo off]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { signedUrlPath } from '../src/signed-urls/signature.ts'
import { missing, S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from '../test/stores/servers.ts'
import { startHaproxy } from './balancer.ts'
import { percentile } from './probe.ts'
import { startServer, type ServerHandle } from './server-process.ts'

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: missing(serverBinary('versitygw')) === undefined ? 'both' : 'file' },
    requests: { type: 'string', default: '300' },
    urls: { type: 'string', default: '30' },
    connections: { type: 'string', default: '12' },
    memo: { type: 'string', default: 'on' }
  }
})
const REQUESTS = Number(args.requests)
const URLS = Number(args.urls)
const CONNECTIONS = Number(args.connections)
const REPLICAS = 3
const HIT_ROUNDS = 10
const KEY = Buffer.alloc(32, 0x5a)
const SALT = Buffer.alloc(32, 0xa5)

type Kind = 'miss' | 'store hit' | 'memo hit'
interface Sample { url: number, ms: number, status: number, kind: Kind, replica: string }

const cleanups: Array<() => Promise<void> | void> = []
const say = (line: string) => process.stdout.write(`${line}\n`)
const f = (ms: number) => Number.isNaN(ms) ? '-' : ms.toFixed(1)

/** A 3 MP photo made here (noise over a gradient, so it compresses as a photo does), served at /p0.jpg ... by a counting origin. */
async function origin () {
  const photo = await sharp({ create: { width: 2048, height: 1536, channels: 3, background: '#4a7', noise: { type: 'gaussian', mean: 120, sigma: 40 } } }).jpeg({ quality: 85 }).toBuffer()
  const fetches = new Map<string, number>()
  const server = createServer((req, res) => {
    fetches.set(req.url!, (fetches.get(req.url!) ?? 0) + 1)
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise(resolve => server.close(() => resolve())))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, fetches }
}

/** Where the store is, and what the replicas need to reach it. */
async function storage (kind: string, folder: string): Promise<Record<string, string>> {
  if (kind === 'file') return { RESULT_STORAGE: `file://${join(folder, 'results')}` }
  const server = await startVersitygw({ after: fn => cleanups.push(fn) })
  cleanups.push(() => server.close())
  const endpoint = `http://127.0.0.1:${server.port}`
  const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: S3_ACCESS, secretAccessKey: S3_SECRET } })
  await client.send(new CreateBucketCommand({ Bucket: 'results' }))
  client.destroy()
  return { RESULT_STORAGE: 's3://results/thumbs', S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: 'true', S3_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_EC2_METADATA_DISABLED: 'true' }
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
async function metric (base: string, pattern: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text()
  return [...text.matchAll(new RegExp(pattern, 'g'))].reduce((sum, m) => sum + Number(m[1]), 0)
}

/**
 * A replica that is surely ours: server-process.ts finds a free port, then the server binds it, and on a busy
 * machine another process may take it between the two and answer /health in its place. Our key must be taken.
 */
async function startReplica (env: Record<string, string>): Promise<ServerHandle> {
  for (let attempt = 1; ; attempt++) {
    const replica = await startServer(env).catch((err: Error) => { if (attempt === 3) throw err })
    if (replica !== undefined) {
      const ours = await fetch(`${replica.base}/api/hash`, { method: 'POST', headers: { authorization: `Bearer ${replica.apiKey}`, 'content-type': 'application/octet-stream' }, body: 'x' })
      if (ours.status !== 401) return replica
      await replica.stop()
    }
    if (attempt === 3) throw new Error('no replica of ours came up in 3 attempts (its port taken by another server)')
  }
}

function kindOf (timing: string | null): Kind {
  if (timing?.startsWith('result;') === true) return 'store hit'
  return timing?.includes('work;') === true ? 'miss' : 'memo hit'
}

async function get (base: string, path: string, url: number): Promise<Sample> {
  const started = performance.now()
  const res = await fetch(`${base}${path}`, { headers: { accept: 'image/avif,image/webp,*/*' } })
  await res.arrayBuffer()
  return { url, ms: performance.now() - started, status: res.status, kind: kindOf(res.headers.get('server-timing')), replica: res.headers.get('x-replica') ?? 'direct' }
}

/** The same order every run: each URL REQUESTS/URLS times, shuffled (a small LCG, seeded). */
function order (): number[] {
  const list = Array.from({ length: REQUESTS }, (_, n) => n % URLS)
  let seed = 45
  for (let n = list.length - 1; n > 0; n--) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    const m = seed % (n + 1);
    [list[n], list[m]] = [list[m]!, list[n]!]
  }
  return list
}

async function run (kind: string) {
  const folder = mkdtempSync(join(tmpdir(), 'thumbd-replicas-'))
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }))
  const source = await origin()
  const env = {
    ...await storage(kind, folder),
    URL_SIGNING_KEYS: KEY.toString('hex'),
    URL_SIGNING_SALTS: SALT.toString('hex'),
    ALLOW_PRIVATE_SOURCES: 'true',
    ALLOWED_SOURCES: `${source.base}/`,
    POOL_THREADS: '1',
    ...(args.memo === 'off' ? { RESULT_CACHE_BYTES: '0' } : {})
  }
  const replicas: ServerHandle[] = []
  for (let n = 0; n < REPLICAS; n++) {
    const replica = await startReplica(env)
    cleanups.push(() => replica.stop())
    replicas.push(replica)
  }
  await new Promise(resolve => setTimeout(resolve, 1000))
  const idle = replicas.map(r => rssMb(r.pid))
  const balancer = await startHaproxy(replicas.map(r => r.base), folder)
  cleanups.push(() => balancer.stop())
  const paths = Array.from({ length: URLS }, (_, n) => signedUrlPath(`/rs:fill:320:240/q:75/plain/${source.base}/p${n}.jpg@webp`, KEY, SALT))

  const queue = order()
  const samples: Sample[] = []
  const started = performance.now()
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) samples.push(await get(balancer.base, paths[next]!, next))
  }))
  const seconds = (performance.now() - started) / 1000

  const jobs = (await Promise.all(replicas.map(r => metric(r.base, /thumbd_jobs_total\{kind="resize",outcome="ok"\} (\d+)/.source)))).reduce((a, b) => a + b, 0)
  const reads = async (outcome: string) => (await Promise.all(replicas.map(r => metric(r.base, `thumbd_result_store_reads_total\\{store="[a-z0-9]+",outcome="${outcome}"\\} (\\d+)`)))).reduce((a, b) => a + b, 0)
  const writes = async (outcome: string) => (await Promise.all(replicas.map(r => metric(r.base, `thumbd_result_store_writes_total\\{store="[a-z0-9]+",outcome="${outcome}"\\} (\\d+)`)))).reduce((a, b) => a + b, 0)
  const perUrl = Array.from({ length: URLS }, (_, n) => source.fetches.get(`/p${n}.jpg`) ?? 0)
  const fetched = perUrl.reduce((a, b) => a + b, 0)

  say(`\n## ${kind === 'file' ? 'shared directory' : 'S3-compatible server (versitygw)'}: ${REPLICAS} replicas (POOL_THREADS=1) behind HAProxy, ${REQUESTS} GETs of ${URLS} URLs, ${CONNECTIONS} connections, memo ${args.memo}\n`)
  say(`statuses: ${JSON.stringify(Object.fromEntries([...new Set(samples.map(s => s.status))].map(s => [s, samples.filter(x => x.status === s).length])))}; ${seconds.toFixed(1)} s; by replica: ${JSON.stringify(Object.fromEntries([...new Set(samples.map(s => s.replica))].sort().map(r => [r, samples.filter(s => s.replica === r).length])))}`)
  say(`jobs across all replicas: ${jobs} (/metrics), origin fetches ${fetched}; target ≤ ${URLS} + ${REPLICAS} per URL arriving before its first result is stored`)
  const histogram = [...new Set(perUrl)].sort().map(count => `${perUrl.filter(c => c === count).length} URLs × ${count}`)
  say(`jobs per URL: ${histogram.join(', ')}  [${perUrl.join(' ')}]`)
  say(`store reads: ${await reads('hit')} hit, ${await reads('miss')} miss, ${await reads('error')} error, ${await reads('timeout')} timeout; writes: ${await writes('ok')} ok, ${await writes('error')} error, ${await writes('skipped')} skipped`)
  say('\n| replies | count | p50 ms | p99 ms |\n|---|---|---|---|')
  for (const k of ['miss', 'store hit', 'memo hit'] as const) {
    const ms = samples.filter(s => s.kind === k).map(s => s.ms)
    say(`| ${k} (through HAProxy) | ${ms.length} | ${f(percentile(ms, 50))} | ${f(percentile(ms, 99))} |`)
  }

  // A fourth replica without the memo: every request a store hit, straight to it on loopback, one at a time.
  const direct = await startReplica({ ...env, RESULT_CACHE_BYTES: '0' })
  cleanups.push(() => direct.stop())
  const hits: Sample[] = []
  for (let round = 0; round < HIT_ROUNDS; round++) for (let n = 0; n < URLS; n++) hits.push(await get(direct.base, paths[n]!, n))
  const storeHits = hits.filter(s => s.kind === 'store hit').map(s => s.ms)
  const others = hits.filter(s => s.kind !== 'store hit')
  if (others.length > 0) say(`not store hits: ${others.length} (statuses ${JSON.stringify([...new Set(others.map(s => s.status))])}, kinds ${JSON.stringify([...new Set(others.map(s => s.kind))])})`)
  say(`| store hit, straight to a replica with the memo off (${HIT_ROUNDS} rounds of ${URLS}, one at a time) | ${storeHits.length} of ${hits.length} | ${f(percentile(storeHits, 50))} | ${f(percentile(storeHits, 99))} |`)
  say(`\nidle RSS with RESULT_STORAGE set (MB, 1 s after start): ${idle.map(f).join(', ')}; after the run: ${replicas.map(r => f(rssMb(r.pid))).join(', ')}`)
}

try {
  for (const kind of args.store === 'both' ? ['file', 's3'] : [args.store!]) {
    await run(kind)
    for (const clean of cleanups.splice(0).reverse()) await clean()
  }
} finally {
  for (const clean of cleanups.splice(0).reverse()) await clean()
}
