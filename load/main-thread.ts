// node load/main-thread.ts PHOTO [--width N] [--connections N] [--duration S] [--rounds N] [--route url|upload|get]
// [--cpu-prof DIR] [--stand-in] [--https]: the CPU thumbd's main thread spends per request, by route (the photo by URL
// from a loopback origin, as an upload, and by imgproxy's signed GET URL), against what the rest of its process
// tree spends (the pool, libvips' threads, the digest thread, V8's helper, libuv), and from the two how many
// pool cores one event loop can feed. Thread CPU from /proc/PID/task/*/stat. With --cpu-prof the server writes
// V8 CPU profiles of its threads into DIR (the main thread's is the largest). With --stand-in the pool answers
// each job with the real job's first answer (load/shapes/stand-in-jobs.ts), so the main thread alone sets the
// pace (32 connections unless told): its CPU per request at the rates a host with many cores would ask of it,
// and how busy it was (1.0 = one core). With --https the origin serves HTTPS (a self-signed certificate made by
// openssl, trusted by thumbd through NODE_EXTRA_CA_CERTS): the main thread then also decrypts every photo.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { fire, type CannonOptions } from './cannon.ts'
import { CLOCK_TICKS_PER_SECOND, processTree } from './sampler.ts'
import { selfSignedCertificate } from './self-signed.ts'
import { startServer, warmCompileCache } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    width: { type: 'string', default: '320' },
    connections: { type: 'string' },
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    route: { type: 'string' },
    'stand-in': { type: 'boolean', default: false },
    https: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' }
  }
})
const photoPath = positionals[0]
if (photoPath === undefined) {
  process.stderr.write('usage: node load/main-thread.ts PHOTO.jpg [--width N] [--connections N] [--duration S]\n')
  process.exit(2)
}
const standIn = flags['stand-in']
const [width, connections, seconds, rounds] = [Number(flags.width), Number(flags.connections ?? (standIn ? 32 : 4)), Number(flags.duration), Number(flags.rounds)]
const STAND_IN_ENTRY = fileURLToPath(new URL('./shapes/stand-in-jobs.ts', import.meta.url))
const profile: Record<string, string> = flags['cpu-prof'] === undefined ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${flags['cpu-prof']}` }

/**
 * CPU seconds of the main thread (its tid is the pid: utime + stime of its task), the kernel's share of them
 * (system calls: on loopback a send also runs the receiver's side of TCP), and of the whole process tree.
 */
function cpu (pid: number): { main: number, kernel: number, tree: number } {
  const text = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const [user, system] = [Number(fields[11]), Number(fields[12])]
  return { main: (user + system) / CLOCK_TICKS_PER_SECOND, kernel: system / CLOCK_TICKS_PER_SECOND, tree: processTree(pid).reduce((sum, s) => sum + s.cpuTicks, 0) / CLOCK_TICKS_PER_SECOND }
}

await warmCompileCache()
const photo = await readFile(photoPath)
/** A folder removed at exit. */
function scratch (): string {
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-bench-tls-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}
const tls = flags.https ? selfSignedCertificate(scratch()) : undefined
const statics = await startStaticServer(dirname(photoPath), { tls })
const [key, salt] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]
// Room for every connection's fetch at once: past MAX_CONCURRENT_FETCHES (16) a URL request is refused 503,
// and the refusals' CPU would be counted against the photos (at 32 connections a third of them were 503s).
const fetches = String(Math.max(16, connections))
const thumbd = await startServer({ EXECUTION_MODE: 'pool', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/`, URL_SIGNING_KEYS: key, URL_SIGNING_SALTS: salt, MAX_CONCURRENT_FETCHES: fetches, ...(tls === undefined ? {} : { NODE_EXTRA_CA_CERTS: tls.certPath }), ...profile }, standIn ? STAND_IN_ENTRY : undefined)
const auth = { authorization: `Bearer ${thumbd.apiKey}` }
const source = `${statics.base}/${encodeURIComponent(basename(photoPath))}`
const routes: Record<string, () => Omit<CannonOptions, 'connections' | 'durationSeconds'>> = {
  url: () => ({ url: `${thumbd.base}/api/thumbnail`, headers: { ...auth, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ url: source, width, quality: 80, format: 'jpeg' })) }),
  upload: () => ({ url: `${thumbd.base}/api/thumbnail?width=${width}&quality=80&format=jpeg`, headers: { ...auth, 'content-type': 'image/jpeg' }, body: photo }),
  // imgproxy's signed URL, a fresh one per request (load/imgproxy-url.ts: the same one would be the memo's).
  get: () => ({ url: thumbd.base, method: 'GET', headers: {}, body: Buffer.alloc(0), unique: { prefix: '/i', signed: { source, format: 'jpeg', width, key, salt } } })
}
try {
  for (let round = 0; round < rounds; round++) {
    for (const [route, request] of Object.entries(routes)) {
      if (flags.route !== undefined && route !== flags.route) continue
      const before = cpu(thumbd.pid)
      const result = await fire({ ...request(), connections, durationSeconds: seconds }).result
      const after = cpu(thumbd.pid)
      const ok = result.statusCodeStats['200']?.count ?? 0
      const main = (after.main - before.main) * 1000 / ok
      const kernel = (after.kernel - before.kernel) * 1000 / ok
      const rest = (after.tree - before.tree) * 1000 / ok - main
      const refused = Object.entries(result.statusCodeStats).reduce((n, [code, { count }]) => code === '200' ? n : n + count, 0) + result.errors
      const line = `${route}: ${ok} ok (${(ok / result.duration).toFixed(1)}/s${refused > 0 ? `, ${refused} not ok, their CPU counted in` : ''}); main thread ${main.toFixed(2)} ms (${kernel.toFixed(2)} in the kernel)`
      const busy = (after.main - before.main) / result.duration
      process.stdout.write(standIn
        ? `${line} per request with stand-in jobs, busy ${busy.toFixed(2)} of a core\n`
        : `${line}, the rest ${rest.toFixed(1)} ms per request: one event loop feeds ${(rest / main).toFixed(1)} cores\n`)
    }
  }
} finally {
  await thumbd.stop()
  await statics.close()
}
