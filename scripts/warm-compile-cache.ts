// Fills Node's compile cache (NODE_COMPILE_CACHE) with every module the server and its threads load, by
// running the server once: start, one /api/hash past the digest thread's threshold (which starts it), SIGTERM,
// and the ffmpeg launcher (workers/tools/launcher-process.ts) once, which exits when its stdin closes. With the
// cache warm no thread loads Node's TypeScript stripper (amaro, about 10 MB per thread): idle RSS goes from
// about 200 to 165 MB with two job threads (`npm run bench`). The Docker image runs this at build time and
// then only reads the cache, so a read-only root filesystem is fine. Node keys entries on each file's
// contents: a stale entry is never used.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { OFFLOAD_BYTES } from '../src/sources/digests.ts'

const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url))
const LAUNCHER = fileURLToPath(new URL('../workers/tools/launcher-process.ts', import.meta.url))
const READY_TIMEOUT_MS = 60_000

if (process.env.NODE_COMPILE_CACHE === undefined) {
  console.error('warm-compile-cache: set NODE_COMPILE_CACHE to the cache directory')
  process.exit(2)
}

const free = createServer().listen(0, '127.0.0.1')
await once(free, 'listening')
const { port } = free.address() as { port: number }
free.close()

const key = randomBytes(18).toString('base64url')
const server = spawn(process.execPath, [SERVER], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', API_KEYS: key, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit']
})
const exited = once(server, 'exit') as Promise<[number | null, string | null]>
try {
  const base = `http://127.0.0.1:${port}`
  const until = Date.now() + READY_TIMEOUT_MS
  while (!(await fetch(`${base}/health`).then(r => r.ok, () => false))) {
    if (Date.now() > until || server.exitCode !== null) throw new Error('the server did not become ready')
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const res = await fetch(`${base}/api/hash`, { method: 'POST', body: randomBytes(OFFLOAD_BYTES + 1), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' } })
  if (!res.ok) throw new Error(`/api/hash answered ${res.status}`)
  // Threads write their part of the cache as they stop, the main thread as it exits.
  server.kill('SIGTERM')
  const [code] = await exited
  if (code !== 0) throw new Error(`the server exited ${code}`)
  // Launchers start with the first video job; warm, one holds ~48 MB instead of ~67.
  const launcher = spawn(process.execPath, [LAUNCHER, '{}'], { stdio: ['ignore', 'ignore', 'inherit'] })
  const [launcherCode] = await once(launcher, 'exit') as [number | null]
  if (launcherCode !== 0) throw new Error(`the launcher exited ${launcherCode}`)
  console.log(`compile cache warm in ${process.env.NODE_COMPILE_CACHE}`)
} catch (err) {
  server.kill('SIGKILL')
  console.error(`warm-compile-cache: ${(err as Error).message}`)
  process.exit(1)
}
