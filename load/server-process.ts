// Starts thumbd as `npm start` would (node with its flags and allocator setting and src/server.ts, with its compile cache) on a free loopback port with
// a generated key, waits until /health says it can work, and stops it with SIGTERM (SIGKILL if it will not go).
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../src/node-flags.ts'

const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url))
const WARM_COMPILE_CACHE = fileURLToPath(new URL('../scripts/warm-compile-cache.ts', import.meta.url))
/** Where `npm start` keeps Node's compile cache (package.json). */
const COMPILE_CACHE = fileURLToPath(new URL('../node_modules/.cache/thumbd-compile', import.meta.url))
const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 40_000

/**
 * The server environment a bench's repeatable `--env NAME=VALUE` flags add (e.g. IMAGE_DECODER=sandbox); a pair
 * of another form is one line on stderr and exit 2, before any server starts.
 */
export function envFlags (pairs: string[]): Record<string, string> {
  const bad = pairs.find(pair => !/^[A-Z_][A-Z0-9_]*=/.test(pair))
  if (bad !== undefined) {
    process.stderr.write(`--env takes NAME=VALUE (got "${bad}")\n`)
    process.exit(2)
  }
  return Object.fromEntries(pairs.map(pair => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]))
}

export interface ServerHandle {
  base: string
  apiKey: string
  pid: number
  stop (): Promise<void>
}

export async function freePort (): Promise<number> {
  const probe = createServer()
  await new Promise<void>(resolve => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise(resolve => probe.close(resolve))
  return port
}

/** `entry`: the script to run, src/server.ts unless a comparison shape (shapes/) names its own. */
export async function startServer (shapeEnv: Record<string, string>, entry = SERVER): Promise<ServerHandle> {
  const port = await freePort()
  const apiKey = randomBytes(18).toString('base64url')
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, entry], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...SERVER_ENV, NODE_COMPILE_CACHE: COMPILE_CACHE, PORT: String(port), HOST: '127.0.0.1', API_KEYS: apiKey, LOG_LEVEL: 'warn', ...shapeEnv },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000) })
  const base = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    await exited
    clearTimeout(timer)
  }
  const until = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`thumbd exited during start (${child.exitCode}): ${stderr.trim()}`)
    const ready = await fetch(`${base}/health`).then(r => r.status === 200, () => false)
    if (ready) return { base, apiKey, pid: child.pid!, stop }
    if (Date.now() > until) {
      await stop()
      throw new Error(`thumbd did not become ready within ${READY_TIMEOUT_MS / 1000} s: ${stderr.trim()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** Fills the compile cache as the Docker build does (scripts/warm-compile-cache.ts), so the first start is warm too. */
export async function warmCompileCache (): Promise<void> {
  await new Promise<void>((resolve, reject) => execFile(process.execPath, [WARM_COMPILE_CACHE], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_COMPILE_CACHE: COMPILE_CACHE }
  }, err => err === null ? resolve() : reject(err)))
}
