// npm run bench:store-ranges: the 2 GB hour of 1080p of range-bench.ts (range-media.ts), in a bucket of a real
// S3-compatible server (versitygw, from scripts/install-test-servers.sh) on loopback, uploaded once through
// thumbd's own S3 store (a multipart upload) and kept under load/.media/store-bench-s3/. thumbd, started as
// `npm start` is with USE_S3 and S3_ENDPOINT, is asked for the poster at 50 % of s3://bench/hour.mp4 (and .mkv);
// a counting proxy between thumbd and the server gives the bytes the server sent. Target (issue 45): the poster
// in < 1.5 s, reading < 1 % of the file. Prints the median of `--repeats` alternating runs.
import { createReadStream } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { availableParallelism, cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { MEDIA_DIR } from './media.ts'
import { longVideos } from './range-media.ts'
import { startServer, warmCompileCache } from './server-process.ts'
import { createS3Store } from '../src/stores/s3/s3-store.ts'
import { countingProxy, S3_ACCESS, S3_SECRET, serverBinary, startVersitygw } from '../test/stores/servers.ts'

const { values: flags } = parseArgs({ options: { repeats: { type: 'string', default: '5' }, store: { type: 'string', default: 's3' } } })
if (flags.store !== 's3') throw new Error('--store s3 is the one store this bench runs (the others are emulators, not object stores to time)')
const repeats = Number(flags.repeats)
const say = (line: string) => process.stderr.write(`${line}\n`)
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`

const credentials = { AWS_ACCESS_KEY_ID: S3_ACCESS, AWS_SECRET_ACCESS_KEY: S3_SECRET, AWS_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' }
Object.assign(process.env, credentials)
const videos = await longVideos(60)
const data = join(MEDIA_DIR, 'store-bench-s3')
await mkdir(join(data, 'data', 'bench'), { recursive: true })
await mkdir(join(data, 'versions'), { recursive: true })
say(`versitygw: ${serverBinary('versitygw')}`)
const s3 = await startVersitygw({ after: () => {} }, data)
const proxy = await countingProxy(s3.port)
const store = await createS3Store({ endpoint: `http://127.0.0.1:${s3.port}`, forcePathStyle: true, allowed: [], denied: [] }, 600_000)
const sizes: Record<string, number> = {}
for (const [name, path] of Object.entries(videos)) {
  const key = `hour.${name}`
  const size = (await stat(path)).size
  sizes[name] = size
  if ((await store.stat({ scheme: 's3', bucket: 'bench', key }))?.size === size) continue
  say(`uploading ${mb(size)} to s3://bench/${key} (once)...`)
  const started = performance.now()
  await store.write({ scheme: 's3', bucket: 'bench', key }, createReadStream(path), { contentType: 'video/mp4' })
  say(`uploaded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
await store.close()

await warmCompileCache()
const server = await startServer({ ...credentials, USE_S3: 'true', S3_ENDPOINT: proxy.url, S3_FORCE_PATH_STYLE: 'true', JOB_TIMEOUT_MS: '60000' })
const CASES = [
  { name: 'poster at 50 %, MP4 (index at the end)', file: 'mp4', query: 'at=50%25' },
  { name: 'poster at 50 %, Matroska (cues at the end)', file: 'mkv', query: 'at=50%25' },
  { name: 'poster at 50 %, MP4, seek=keyframe', file: 'mp4', query: 'at=50%25&seek=keyframe' }
]
const results = new Map<string, Array<{ ms: number, bytes: number }>>()
try {
  for (let round = 0; round < repeats; round++) {
    for (const c of CASES) {
      proxy.reset()
      const started = performance.now()
      const res = await fetch(`${server.base}/api/thumbnail?${c.query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `s3://bench/hour.${c.file}` })
      })
      await res.arrayBuffer()
      const ms = performance.now() - started
      if (res.status !== 200) throw new Error(`${c.name}: ${res.status}`)
      // The last bytes of a dropped answer may still be in flight: counted a moment later.
      await new Promise(resolve => setTimeout(resolve, 50))
      results.set(c.name, [...(results.get(c.name) ?? []), { ms, bytes: proxy.received() }])
      say(`round ${round + 1}: ${c.name}: ${ms.toFixed(0)} ms, ${mb(proxy.received())}`)
    }
  }
  const lines = [
    `range reads from a bucket: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), median of ${repeats} alternating runs, versitygw on loopback`,
    `files: MP4 ${mb(sizes.mp4!)}, Matroska ${mb(sizes.mkv!)}, 60 min of 1080p H.264`,
    '',
    '| case | time (median) | bytes sent by the server (median) | of the file |',
    '|---|---:|---:|---:|'
  ]
  for (const c of CASES) {
    const list = results.get(c.name)!
    const bytes = median(list.map(r => r.bytes))
    lines.push(`| ${c.name} | ${(median(list.map(r => r.ms)) / 1000).toFixed(2)} s | ${mb(bytes)} | ${(100 * bytes / sizes[c.file]!).toFixed(2)} % |`)
  }
  process.stdout.write(lines.join('\n') + '\n')
} finally {
  await server.stop()
  await proxy.close()
  await s3.close()
}
