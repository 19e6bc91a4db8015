// Shared by the asynchronous-job tests: an app on the embedded queue (or a given JOBS_QUEUE) with a destination
// root and an origin allowed, and a poll of a job until it ends.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { AUTH, build, TEST_KEY } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'

export const WEBHOOK_KEY = 'whsec-test-0123456789'

export interface JobsEnv {
  dataDir: string
  root: string
  origin: string
  receiver: Receiver
  env: Record<string, string>
}

export interface Received {
  headers: IncomingMessage['headers']
  body: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** Answers for the next deliveries (default 204). */
  statuses: number[]
}

/** A loopback webhook receiver: records each POST. */
export async function webhookReceiver (t: TestContext): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], statuses: [] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      receiver.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() })
      res.writeHead(receiver.statuses.shift() ?? 204).end()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}

/** Serves each file by name, 404 otherwise; `/slow` answers only when the test ends (a job that stays running). */
async function origin (t: TestContext, files: Record<string, Buffer>): Promise<string> {
  const held: Array<() => void> = []
  const server = createServer((req, res) => {
    if (req.url === '/slow') return held.push(() => res.destroy())
    const file = files[req.url!.slice(1)]
    if (file === undefined) return res.writeHead(404).end()
    res.writeHead(200, { 'content-length': file.length }).end(file)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => { for (const end of held) end(); server.close(resolve) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export async function jobsEnv (t: TestContext, files: Record<string, Buffer>, extra: Record<string, string> = {}): Promise<JobsEnv> {
  const dataDir = tempFolder('thumbd-jobs-db-', t)
  const root = tempFolder('thumbd-jobs-out-', t)
  const base = await origin(t, files)
  const receiver = await webhookReceiver(t)
  const env = {
    JOBS_DATA_DIR: dataDir,
    JOBS_DESTINATION_ROOT: root,
    ALLOW_PRIVATE_SOURCES: 'true',
    ALLOWED_SOURCES: `${base}/,${new URL(receiver.url).origin}/`,
    WEBHOOK_SIGNING_KEYS: WEBHOOK_KEY,
    JOB_LEASE_SECONDS: '10',
    ...extra
  }
  return { dataDir, root, origin: base, receiver, env }
}

export const OTHER_KEY = 'other-key-0123456789'
export const OTHER = { authorization: `Bearer ${OTHER_KEY}` }

export const buildJobsApp = (t: TestContext, env: Record<string, string>) => build(t, { API_KEYS: `${TEST_KEY},${OTHER_KEY}`, ...env })

/** Waits until `check` holds (or fails after timeoutMs). */
export async function eventually (check: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'the condition') {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`${what} did not happen within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

export async function submit (app: FastifyInstance, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/jobs', headers: { ...AUTH, ...headers }, payload: body as object })
}

/** Polls GET /api/jobs/{id} until the job leaves queued/running (or the time is up). */
export async function settled (app: FastifyInstance, id: string, timeoutMs = 60_000, headers = AUTH) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/api/jobs/${id}`, headers })
    assert.equal(res.statusCode, 200, res.body)
    const status = res.json()
    if (status.state !== 'queued' && status.state !== 'running') return status
    if (Date.now() > until) assert.fail(`job ${id} still ${status.state} after ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}
