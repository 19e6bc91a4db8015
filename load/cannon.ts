// autocannon in a process of its own at lower priority: the load generator competes for the same cores as
// the server here, and in the same process as the /health probe it would delay the probe itself. A remote
// client's CPU is not the server's; this is the nearest a single machine gets to that.
import { spawn } from 'node:child_process'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Result } from 'autocannon'
import type { SignedThumbnail } from './imgproxy-url.ts'

const CHILD = fileURLToPath(new URL('cannon-child.ts', import.meta.url))
const CLIENT_NICENESS = '10'

export interface CannonOptions {
  url: string
  /** Default POST; GET sends no body (a peer's URL API). */
  method?: 'GET' | 'POST'
  headers: Record<string, string>
  body: Buffer
  connections: number
  durationSeconds: number
  /** GET only: a freshly signed imgproxy-dialect path per request, after `prefix`, instead of `url`'s path. */
  unique?: UniqueUrls
}

export interface UniqueUrls { prefix: string, signed: SignedThumbnail }

export interface Cannon {
  result: Promise<Result>
  stop (): void
}

export function fire ({ url, method = 'POST', headers, body, connections, durationSeconds, unique }: CannonOptions): Cannon {
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-cannon-'))
  const bodyFile = join(dir, 'body')
  writeFileSync(bodyFile, body)
  const child = spawn('nice', ['-n', CLIENT_NICENESS, process.execPath, CHILD, JSON.stringify({ url, method, headers, bodyFile, connections, durationSeconds, unique })], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-2000) })
  const result = new Promise<Result>((resolve, reject) => {
    child.on('close', code => {
      rmSync(dir, { recursive: true, force: true })
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as Result)
      } catch {
        reject(new Error(`autocannon failed (${code}): ${stderr.trim()}`))
      }
    })
  })
  return { result, stop: () => child.kill('SIGINT') }
}
