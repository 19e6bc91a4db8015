// The real storage servers the store tests start, each on an ephemeral loopback port, once per test file:
// versitygw (S3) and fake-gcs-server (GCS), built by scripts/install-test-servers.sh, and Azurite (Azure Blob),
// an npm devDependency. A server whose binary is absent skips its tests, except under CI, where that fails.
// Between thumbd and each server sits a counting TCP proxy: the bytes the server sent, as the server sent them,
// and a way to make the store slow or unreachable.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { tempFolder } from '../temp-folder.ts'

const SCRIPT = new URL('../../scripts/install-test-servers.sh', import.meta.url)

/** Where the install script put a Go server, at the version the script pins. */
export function serverBinary (name: 'versitygw' | 'fake-gcs-server'): string {
  const variable = name === 'versitygw' ? 'VERSITYGW_VERSION' : 'FAKE_GCS_VERSION'
  const version = new RegExp(`^${variable}=(\\S+)$`, 'm').exec(readFileSync(SCRIPT, 'utf8'))![1]!
  const dir = process.env.THUMBD_TEST_SERVERS ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'thumbd', 'test-servers')
  return join(dir, `${name}-${version}`, name)
}

/** Why a server's tests cannot run here (absent binary outside CI), or undefined. In CI an absent server fails. */
export function missing (binary: string): string | undefined {
  if (existsSync(binary)) return undefined
  if (process.env.CI) throw new Error(`${binary} is missing: run sh scripts/install-test-servers.sh`)
  return `${binary} is missing (sh scripts/install-test-servers.sh); skipped outside CI`
}

export interface Running {
  port: number
  close (): Promise<void>
}

/** A port free now (the server binds it a moment later: a race lost is a start that fails loudly, not a wrong test). */
async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

async function accepting (port: number, child: ChildProcess, name: string): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`)
    const socket = createConnection(port, '127.0.0.1')
    const up = await new Promise<boolean>(resolve => socket.once('connect', () => resolve(true)).once('error', () => resolve(false)))
    socket.destroy()
    if (up) return
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within 30 s`)
    await sleep(50)
  }
}

async function startProcess (name: string, command: string, args: (port: number) => string[], cwd?: string): Promise<Running> {
  const port = await freePort()
  const child = spawn(command, args(port), { stdio: ['ignore', 'ignore', 'pipe'], cwd })
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => { errors = (errors + chunk.toString()).slice(-2000) })
  try {
    await accepting(port, child, name)
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`${(err as Error).message}: ${errors}`)
  }
  return {
    port,
    async close () {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await Promise.race([once(child, 'exit'), sleep(3000).then(() => child.kill('SIGKILL'))])
    }
  }
}

export const S3_ACCESS = 'thumbd-test-access'
export const S3_SECRET = 'thumbd-test-secret-0123456789'

/** `root`: a folder of data/ and versions/ to keep (the bench's); by default a temp folder removed `until`. */
export function startVersitygw (until: { after (fn: () => void): void }, root = tempFolder('thumbd-versitygw-', until)): Promise<Running> {
  for (const dir of ['data', 'versions']) mkdirSync(join(root, dir), { recursive: true })
  return startProcess('versitygw', serverBinary('versitygw'), port =>
    ['--port', `127.0.0.1:${port}`, '--access', S3_ACCESS, '--secret', S3_SECRET, '--quiet', 'posix', '--versioning-dir', join(root, 'versions'), join(root, 'data')])
}

export function startFakeGcs (): Promise<Running> {
  return startProcess('fake-gcs-server', serverBinary('fake-gcs-server'), port =>
    ['-scheme', 'http', '-host', '127.0.0.1', '-port', String(port), '-backend', 'memory', '-public-host', `127.0.0.1:${port}`, '-external-url', `http://127.0.0.1:${port}`, '-log-level', 'error'])
}

/** Azurite's well-known development account and key (published by Microsoft for the emulator). */
export const AZURITE_ACCOUNT = 'devstoreaccount1'
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
export const AZURITE_BIN = new URL('../../node_modules/azurite/dist/src/blob/main.js', import.meta.url).pathname

export function startAzurite (until: { after (fn: () => void): void }): Promise<Running> {
  // No telemetry: the tests reach loopback only. In memory, run in a folder of its own all the same.
  return startProcess('azurite', process.execPath, port =>
    [AZURITE_BIN, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--inMemoryPersistence', '--disableTelemetry', '--silent', '--skipApiVersionCheck'], tempFolder('thumbd-azurite-', until))
}

export interface CountingProxy {
  url: string
  /** Bytes the server sent through the proxy since the last reset. */
  received (): number
  reset (): void
  /** Connections from thumbd open now (a store read must not leave one behind once its request has ended). */
  open (): number
  /** hold: accept connections and forward nothing (a store that hangs); refuse: close every connection at once. */
  mode (mode: 'pass' | 'hold' | 'refuse'): void
  close (): Promise<void>
}

export async function countingProxy (port: number): Promise<CountingProxy> {
  let received = 0
  let mode: 'pass' | 'hold' | 'refuse' = 'pass'
  const sockets = new Set<Socket>()
  const clients = new Set<Socket>()
  const server = createServer(client => {
    sockets.add(client)
    clients.add(client)
    client.on('close', () => { sockets.delete(client); clients.delete(client) })
    client.on('error', () => {})
    if (mode === 'refuse') return client.destroy()
    // Read and dropped, so that thumbd closing its end is seen here ('close'): a paused socket never sees the FIN.
    if (mode === 'hold') {
      client.resume()
      return
    }
    const upstream = createConnection(port, '127.0.0.1')
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
    upstream.on('data', (chunk: Buffer) => { received += chunk.length })
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port: own } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${own}`,
    received: () => received,
    reset: () => { received = 0 },
    open: () => clients.size,
    mode: (m) => {
      mode = m
      // Keep-alive connections made before a change would carry on as before.
      for (const socket of sockets) socket.destroy()
    },
    async close () {
      for (const socket of sockets) socket.destroy()
      await new Promise(resolve => server.close(resolve))
    }
  }
}
