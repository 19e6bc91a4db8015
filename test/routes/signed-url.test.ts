// Signed GET URLs in imgproxy's dialect, over real HTTP: the signature, the options, caching, and identical
// URLs asked at once sharing one fetch and one job. Sources come from loopback origins that count requests.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { build, decoded } from '../helper.ts'
import { media } from '../media.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')
const SIGNING = { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex') }

/** A loopback origin serving fixed files, counting the requests it answers. */
async function origin (files: Record<string, Buffer | { redirect: string }>) {
  const hits: string[] = []
  const server: Server = createServer((req, res) => {
    hits.push(req.url!)
    const file = files[req.url!.slice(1)]
    if (file === undefined) return res.writeHead(404).end()
    if ('redirect' in file) return res.writeHead(302, { location: file.redirect }).end()
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length }).end(file)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => new Promise(resolve => server.close(resolve)) }
}

const sign = (path: string) => signedUrlPath(path, KEY, SALT)
const okJobs = async (app: Awaited<ReturnType<typeof build>>) => Number(/thumbd_jobs_total\{kind="resize",outcome="ok"\} (\d+)/.exec((await app.inject({ url: '/metrics' })).body)?.[1] ?? 0)

test('a signed plain or base64 URL gives the image, with ETag and Cache-Control; a matching If-None-Match costs no job', async (t) => {
  const photo = await media('jpeg')
  const src = await origin({ 'a.jpg': photo })
  t.after(src.close)
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/`, URL_CACHE_MAX_AGE_SECONDS: '600' })
  const plain = await app.inject({ url: sign(`/rs:fit:300:0/q:70/plain/${src.base}/a.jpg@webp`) })
  assert.equal(plain.statusCode, 200, plain.body)
  assert.equal(plain.headers['content-type'], 'image/webp')
  assert.equal(plain.headers['cache-control'], 'public, max-age=600')
  assert.equal((await decoded(plain.rawPayload)).width, 300)
  const base64 = await app.inject({ url: sign(`/rs:fit:300:0/q:70/${Buffer.from(`${src.base}/a.jpg`).toString('base64url')}.webp`) })
  assert.ok(base64.rawPayload.equals(plain.rawPayload), 'the same image by either form')
  const jobs = await okJobs(app)
  const again = await app.inject({ url: sign(`/rs:fit:300:0/q:70/plain/${src.base}/a.jpg@webp`), headers: { 'if-none-match': String(plain.headers.etag) } })
  assert.equal(again.statusCode, 304)
  assert.equal(await okJobs(app), jobs, 'no job for a 304')
  assert.equal(plain.headers.vary, undefined, 'the format was chosen by the URL, not by Accept')
  const auto = await app.inject({ url: sign(`/f:auto/w:100/plain/${src.base}/a.jpg`), headers: { accept: 'image/avif,image/webp,*/*' } })
  assert.equal(auto.headers['content-type'], 'image/avif')
  assert.equal(auto.headers.vary, 'Accept')
})

test('a wrong, missing or insecure signature is 403 THUMBD_BAD_SIGNATURE; insecure only where allowed; bad options are 400 naming them', async (t) => {
  const src = await origin({ 'a.jpg': await media('jpeg') })
  t.after(src.close)
  const env = { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/` }
  const app = await build(t, env)
  const path = `/w:100/plain/${src.base}/a.jpg`
  const signed = sign(path)
  for (const url of [`/i/insecure${path}`, `/i/${'A'.repeat(43)}${path}`, signed.replace('/w:100/', '/w:101/'), `/i${path}`]) {
    const res = await app.inject({ url })
    assert.equal(res.statusCode, 403, `${url}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_BAD_SIGNATURE')
  }
  for (const [option, name] of [['blur:5', 'blur'], ['w:100/w:200', 'w'], ['w:99999', 'w'], ['g:fp:0.5:0.5', 'g']]) {
    const res = await app.inject({ url: sign(`/${option}/plain/${src.base}/a.jpg`) })
    assert.equal(res.statusCode, 400, `${option}: ${res.body}`)
    assert.match(res.json().message, new RegExp(`"${name}"`))
  }
  assert.deepEqual(src.hits, [], 'nothing fetched for a refused URL')
  const open = await build(t, { ...env, ALLOW_UNSIGNED_URLS: 'true' })
  assert.equal((await open.inject({ url: `/i/insecure${path}` })).statusCode, 200)
})

test('200 identical GETs at once: one fetch, one job, and every one gets the image', async (t) => {
  const src = await origin({ 'a.jpg': await media('jpeg-large') })
  t.after(src.close)
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/` })
  const url = sign(`/rs:fill:200:200/g:sm/plain/${src.base}/a.jpg`)
  const replies = await Promise.all(Array.from({ length: 200 }, () => app.inject({ url })))
  assert.deepEqual([...new Set(replies.map(r => r.statusCode))], [200])
  assert.ok(replies.every(r => r.rawPayload.equals(replies[0]!.rawPayload)))
  assert.equal(src.hits.length, 1, 'one fetch')
  assert.equal(await okJobs(app), 1, 'one job')
})

test('the same guards as a POSTed URL: a source off the allow-list, or redirected off it, is never fetched', async (t) => {
  const elsewhere = await origin({ 'b.jpg': await media('jpeg') })
  const src = await origin({ 'r.jpg': { redirect: `${elsewhere.base}/b.jpg` } })
  t.after(src.close)
  t.after(elsewhere.close)
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/` })
  const off = await app.inject({ url: sign(`/w:100/plain/${elsewhere.base}/b.jpg`) })
  assert.equal(off.statusCode, 400)
  assert.equal(off.json().code, 'THUMBD_SOURCE_FORBIDDEN')
  const redirected = await app.inject({ url: sign(`/w:100/plain/${src.base}/r.jpg`) })
  assert.equal(redirected.json().code, 'THUMBD_SOURCE_FORBIDDEN', redirected.body)
  assert.deepEqual(elsewhere.hits, [], 'the forbidden origin saw no request')
})

test('a video source: video_thumbnail_second picks the frame', async (t) => {
  const src = await origin({ 'v.mp4': await media('mp4-h264') })
  t.after(src.close)
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/` })
  const res = await app.inject({ url: sign(`/vts:1/w:160/plain/${src.base}/v.mp4`) })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'image/jpeg')
  assert.equal((await decoded(res.rawPayload)).width, 160)
})
