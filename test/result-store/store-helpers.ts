// What the result store's route tests share: a counting loopback origin with a real photo, apps built over one
// RESULT_STORAGE (replicas), signed URLs, and the store's figures from /metrics.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { BuildOptions } from '../../src/app.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'
import { waitFor } from '../faults/helpers.ts'

export const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
export const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')
export const SIGNING = { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex') }

/** A loopback origin serving a real JPEG (or `photo`) at any path, counting the requests it answers. */
export async function photoOrigin (t: TestContext, given?: Buffer) {
  const photo = given ?? await media('jpeg')
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(req.url!)
    res.writeHead(200, { 'content-length': photo.length }).end(photo)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits }
}

/** A replica: the real app over `storage`, the in-memory memo off (so every repeat asks the store) unless `env` says. */
export async function replica (t: TestContext, origin: string, storage: string, env: Record<string, string> = {}, options: BuildOptions = {}) {
  return build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${origin}/`, RESULT_STORAGE: storage, RESULT_CACHE_BYTES: '0', ...env }, options)
}

export const sign = (path: string, key = KEY, salt = SALT) => signedUrlPath(path, key, salt)

/** A counter of /metrics, 0 when absent. */
export async function metric (app: FastifyInstance, pattern: RegExp): Promise<number> {
  return Number(pattern.exec((await app.inject({ url: '/metrics' })).body)?.[1] ?? 0)
}

export const jobs = (app: FastifyInstance) => metric(app, /thumbd_jobs_total\{kind="resize",outcome="ok"\} (\d+)/)
export const reads = (app: FastifyInstance, outcome: string) => metric(app, new RegExp(`thumbd_result_store_reads_total\\{store="[a-z0-9]+",outcome="${outcome}"\\} (\\d+)`))
export const writes = (app: FastifyInstance, outcome: string) => metric(app, new RegExp(`thumbd_result_store_writes_total\\{store="[a-z0-9]+",outcome="${outcome}"\\} (\\d+)`))

/** Waits until `app` has written `count` results (writes start after the reply, so a test must wait for them). */
export async function written (app: FastifyInstance, count: number, outcome = 'ok'): Promise<void> {
  let seen = 0
  const until = Date.now() + 5000
  while ((seen = await writes(app, outcome)) < count) {
    if (Date.now() > until) throw new Error(`${seen} result store writes ${outcome}, expected ${count}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

export { waitFor }
