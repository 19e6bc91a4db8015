// The one suite every store passes against its real server (as imgproxy's storage/testsuite): an image through
// every spelling of a source (JSON url, GET plain, GET base64), a video poster read by ranges (bytes counted as
// the server sent them), a missing object, refused credentials, odd keys, a bucket or path not allowed, a store
// unreachable or hanging, and the write/stat/remove the result store and jobs use. Each store's test file
// starts its server once, at its top level, and hands the suite a Harness.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { AUTH, build } from '../helper.ts'
import { media } from '../media.ts'
import { storeUrl } from '../../src/stores/location.ts'
import type { ObjectStore, StoreScheme } from '../../src/stores/store.ts'
import type { CountingProxy } from './servers.ts'

export interface Harness {
  scheme: StoreScheme
  /** The app's env for this store (through the proxy), with `bucket` the one allowed. */
  env: Record<string, string>
  bucket: string
  /** The setting that switches the scheme on, and the one that lists allowed buckets (or the root). */
  settings: { on: string, allowed: string }
  /** A location this store's policy refuses although it exists (another bucket; for local, a symlink out). */
  notAllowed: string
  /** The store itself, straight to the server (test objects are written with it). */
  store: ObjectStore
  proxy?: CountingProxy
  /** The real credentials, which must not appear in a reply or a log either. */
  secrets?: string[]
  /** An env whose credentials the server refuses, and the secret that must not leak; or why the server cannot refuse. */
  denied: { env: Record<string, string>, secret: string, around?: <T>(fn: () => Promise<T>) => Promise<T> } | { untestable: string }
}

const put = (h: Harness, key: string, bytes: Buffer) => h.store.write({ scheme: h.scheme, bucket: h.bucket, key }, bytes, { contentType: 'application/octet-stream' })
const urlOf = (h: Harness, key: string, bucket = h.bucket) => storeUrl({ scheme: h.scheme, bucket: h.scheme === 'local' ? '' : bucket, key })

async function post (app: FastifyInstance, url: string, query = '') {
  return app.inject({ method: 'POST', url: `/api/thumbnail${query}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url } })
}
const plain = (app: FastifyInstance, url: string) => app.inject({ url: `/i/insecure/rs:fit:64:64/plain/${encodeURIComponent(url)}@png` })
const base64 = (app: FastifyInstance, url: string) => app.inject({ url: `/i/insecure/rs:fit:64:64/${Buffer.from(url).toString('base64url')}.png` })

function logSink () {
  let lines = ''
  return { stream: new Writable({ write (chunk, _enc, done) { lines += String(chunk); done() } }), text: () => lines }
}

/** The catalogue reply expected, and no secret, key or path of the store in it. */
function refused (res: { statusCode: number, body: string }, status: number, code: string, mentions: RegExp) {
  assert.equal(res.statusCode, status, res.body)
  const body = JSON.parse(res.body) as { code: string, message: string }
  assert.equal(body.code, `THUMBD_${code}`, res.body)
  assert.match(body.message, mentions)
}

/** `made`: the harness, or why this store's server is absent (its tests then skip). Made at the top level of the test file, so that its `after` hooks run when the file ends. */
export function storeSuite (name: string, made: Harness | string): void {
  const skip = typeof made === 'string' ? made : undefined
  const h = made as Harness
  const it = (title: string, fn: (t: import('node:test').TestContext) => Promise<void>) =>
    test(`${name}: ${title}`, async (t) => { if (skip !== undefined) t.skip(skip); else await fn(t) })

  it('an image, by JSON url, GET plain and GET base64', async (t) => {
    await put(h, 'photos/still.jpg', await media('jpeg'))
    const app = await build(t, { ...h.env, ALLOW_UNSIGNED_URLS: 'true' })
    const url = urlOf(h, 'photos/still.jpg')
    const json = await post(app, url)
    assert.equal(json.statusCode, 200, json.body)
    assert.equal(json.headers['content-type'], 'image/jpeg')
    for (const res of [await plain(app, url), await base64(app, url)]) {
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['content-type'], 'image/png')
    }
  })

  it('a video poster by ranges: a fraction of the bytes, the same frame as the upload', async (t) => {
    // The 20 s MP4 with 24 MiB of a top-level 'free' box after it (ffmpeg skips it by its header): what the first
    // open range sends before it is dropped is the sockets' buffers, some MB on a quiet loopback, so the file must
    // be large beside them for the share of it the server sent to say whether it was read by ranges.
    const video = Buffer.concat([await media('long-mp4'), freeBox(24 << 20)])
    await put(h, 'videos/long.mp4', video)
    const app = await build(t, { ...h.env, RANGE_READ_MIN_BYTES: String(2 ** 20) })
    h.proxy?.reset()
    const remote = await post(app, urlOf(h, 'videos/long.mp4'), '?at=50%25')
    assert.equal(remote.statusCode, 200, remote.body)
    const metrics = (await app.inject({ url: '/metrics' })).body
    const ranged = Number(/^thumbd_range_bytes_total (\d+)/m.exec(metrics)?.[1])
    assert.ok(Number(/^thumbd_range_requests_total (\d+)/m.exec(metrics)?.[1]) >= 2, 'read by range requests')
    // What the server sent: the ranges, and what the first open range had sent before it was dropped.
    const sent = h.proxy?.received() ?? ranged
    t.diagnostic(`${h.scheme}: ${sent} bytes sent by the server (${ranged} in ranges) of ${video.length}`)
    // The ranges are a small part of the file; what the first open range had sent before it was dropped is the
    // sockets' buffers (some MB on loopback, through the proxy twice: a constant, under 1 % of the 2 GB bench file).
    assert.ok(ranged < video.length / 6, `ranges of ${ranged} bytes of ${video.length}`)
    assert.ok(sent < video.length * 0.5, `${sent} bytes of ${video.length}`)
    const whole = await app.inject({ method: 'POST', url: '/api/thumbnail?at=50%25', headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: video })
    assert.ok(remote.rawPayload.equals(whole.rawPayload), 'byte for byte the thumbnail of the uploaded file')
  })

  it('a missing object is 404 SOURCE_NOT_FOUND', async (t) => {
    const app = await build(t, { ...h.env, ALLOW_UNSIGNED_URLS: 'true' })
    refused(await post(app, urlOf(h, 'no/such.jpg')), 404, 'SOURCE_NOT_FOUND', new RegExp(`^Source not found: no such object in ${h.scheme}://`))
    refused(await plain(app, urlOf(h, 'no/such.jpg')), 404, 'SOURCE_NOT_FOUND', /no such object/)
  })

  it('refused credentials are 502 SOURCE_FETCH_FAILED naming the store, the secret in neither reply nor log', async (t) => {
    if ('untestable' in h.denied) return t.skip(h.denied.untestable)
    const { env, secret, around = fn => fn() } = h.denied
    await put(h, 'private/still.jpg', await media('jpeg'))
    const logs = logSink()
    const app = await build(t, { ...h.env, ...env, LOG_LEVEL: 'debug' }, { logStream: logs.stream })
    const res = await around(() => post(app, urlOf(h, 'private/still.jpg')))
    refused(res, 502, 'SOURCE_FETCH_FAILED', new RegExp(`${h.scheme}://${h.bucket} refused access`))
    for (const leak of [secret, ...(h.secrets ?? [])]) assert.ok(!res.body.includes(leak) && !logs.text().includes(leak), 'no secret leaked')
    assert.match(logs.text(), /refused access/, 'logged')
    // Nor the signed request: the SDKs' errors carry it, and only their name and status may reach the log.
    assert.doesNotMatch(logs.text(), /AWS4-HMAC-SHA256|X-Amz-(Signature|Credential)|SharedKey |authorization/i, 'no signed request in the log')
    t.diagnostic(logs.text().split('\n').find(line => line.includes('refused access')) ?? '')
  })

  it('keys with %, #, ?, +, spaces and non-ASCII, in every spelling', async (t) => {
    const app = await build(t, { ...h.env, ALLOW_UNSIGNED_URLS: 'true' })
    const jpeg = await media('jpeg')
    for (const key of ['odd/100% sure.jpg', 'odd/a#b?c=d&e.jpg', 'odd/plus+sign.jpg', 'odd/ünïcödé/日本 語.jpg']) {
      await put(h, key, jpeg)
      const url = urlOf(h, key)
      for (const res of [await post(app, url), await plain(app, url), await base64(app, url)]) assert.equal(res.statusCode, 200, `${key} (${url}): ${res.body}`)
    }
    // The spelling decides the key: unencoded, "#" and "?" would end it (400), "%25" is a "%".
    refused(await post(app, `${h.scheme}://${h.scheme === 'local' ? '' : h.bucket}/odd/a#b?c=d&e.jpg`), 400, 'BAD_OPTIONS', /%23/)
    refused(await post(app, urlOf(h, 'odd/100%25 sure.jpg')), 404, 'SOURCE_NOT_FOUND', /no such object/)
  })

  it('a bucket or path not allowed, and the scheme off, are SOURCE_FORBIDDEN naming the setting', async (t) => {
    const app = await build(t, { ...h.env, ALLOW_UNSIGNED_URLS: 'true' })
    refused(await post(app, h.notAllowed), 400, 'SOURCE_FORBIDDEN', new RegExp(h.settings.allowed))
    refused(await plain(app, h.notAllowed), 400, 'SOURCE_FORBIDDEN', new RegExp(h.settings.allowed))
    const off = await build(t, {})
    refused(await post(off, urlOf(h, 'photos/still.jpg')), 400, 'SOURCE_FORBIDDEN', new RegExp(h.settings.on))
  })

  it('an unreachable store and a store that hangs are 502 naming the store', async (t) => {
    if (h.proxy === undefined) return t.skip('a directory cannot be unreachable')
    const app = await build(t, { ...h.env, FETCH_TIMEOUT_MS: '1500' })
    try {
      h.proxy.mode('refuse')
      refused(await post(app, urlOf(h, 'photos/still.jpg')), 502, 'SOURCE_FETCH_FAILED', new RegExp(`${h.scheme}://${h.bucket} (could not be reached|answered 5)`))
      h.proxy.mode('hold')
      const started = Date.now()
      refused(await post(app, urlOf(h, 'photos/still.jpg')), 502, 'SOURCE_FETCH_FAILED', new RegExp(`${h.scheme}://${h.bucket} timed out`))
      assert.ok(Date.now() - started < 5000, `within the fetch timeout (${Date.now() - started} ms)`)
      // The read that timed out is ended, its socket with it: a store that hangs must not gather one open
      // connection per request (gs:// did, the SDK's read having no way to cancel before the response).
      const deadline = Date.now() + 1000
      while (h.proxy.open() > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
      assert.equal(h.proxy.open(), 0, `${h.proxy.open()} connection(s) to the hanging store left open after the 502`)
    } finally {
      h.proxy.mode('pass')
    }
  })

  it('a body refused part-read (415: no media) closes its connection to the store at once, not at FETCH_TIMEOUT_MS', async (t) => {
    if (h.proxy === undefined) return t.skip('a directory has no connection')
    await put(h, 'text/big.txt', Buffer.alloc(8 * 2 ** 20, 'not media '))
    h.proxy.mode('pass') // no connection left from an earlier test
    // No byte-rate floor: it would end the paused body too, within its 2 s window.
    const app = await build(t, { ...h.env, FETCH_TIMEOUT_MS: '20000', FETCH_MIN_BYTES_PER_SECOND: '0' })
    // Over a real socket with keep-alive: inject's reply does not finish as a socket's does, which masks it.
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const res = await fetch(`${address}/api/thumbnail`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: urlOf(h, 'text/big.txt') }) })
    refused({ statusCode: res.status, body: await res.text() }, 415, 'UNSUPPORTED_MEDIA', /not an image or video/)
    const deadline = Date.now() + 1000
    while (h.proxy.open() > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    assert.equal(h.proxy.open(), 0, `${h.proxy.open()} connection(s) to the store kept open by a refused body`)
  })

  it('write, stat, read back, remove: whole objects with their metadata (the result store and job outputs)', async () => {
    const at = { scheme: h.scheme, bucket: h.bucket, key: 'results/ab/cd.webp' }
    const written = await h.store.write(at, Buffer.from('result bytes'), { contentType: 'image/webp', metadata: { etag: '"x1"' } })
    assert.equal(written.size, 12)
    const stat = await h.store.stat(at)
    assert.equal(stat?.size, 12)
    assert.equal(stat?.metadata?.etag, '"x1"')
    const read = await h.store.read(at, { range: 'bytes=7-' })
    assert.equal(read.statusCode, 206)
    assert.equal(read.headers['content-range'], 'bytes 7-11/12')
    assert.equal(await text(read.body), 'bytes')
    await h.store.remove(at)
    assert.equal(await h.store.stat(at), undefined)
    await assert.rejects(h.store.read(at), { code: 'THUMBD_SOURCE_NOT_FOUND' })
  })
}

/** An ISO BMFF top-level 'free' box of `size` bytes in all: a demuxer skips it by its header. */
function freeBox (size: number): Buffer {
  const box = Buffer.alloc(size)
  box.writeUInt32BE(size, 0)
  box.write('free', 4, 'latin1')
  return box
}
