// Signed GET URLs in imgproxy's dialect, over real HTTP: the signature, the options, caching, and identical
// URLs asked at once sharing one fetch and one job. Sources come from loopback origins that count requests.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { signedUrlPath, signPath } from '../../src/signed-urls/signature.ts'
import { build, decoded } from '../helper.ts'
import { media } from '../media.ts'
import { decoderChildren, decoderProcesses, listen, sleep, waitFor } from '../faults/helpers.ts'

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
  for (const [option, name] of [['trim:5', 'trim'], ['sm:0', 'sm'], ['w:99999', 'w'], ['g:fp:2:0.5', 'g']]) {
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

test('one URL, one spelling of its signature (the other three last characters are 403); the spellings proxies make of its path share one fetch and one job', async (t) => {
  const src = await origin({ 'a.jpg': await media('jpeg-large') })
  t.after(src.close)
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src.base}/` })
  const signature = signPath(`/rs:fit:200:0/q:70/plain/${src.base}/a.jpg`, KEY, SALT)
  // The same 32 bytes with other unused low bits in the last character: Go's decoder and Buffer read them alike.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(signature.at(-1)!)
  const others = [0, 1, 2, 3].map(low => alphabet[(last & ~3) | low]!).filter(c => c !== signature.at(-1)).map(c => signature.slice(0, -1) + c)
  assert.equal(others.length, 3)
  for (const other of others) {
    const res = await app.inject({ url: `/i/${other}/rs:fit:200:0/q:70/plain/${src.base}/a.jpg` })
    assert.equal(res.statusCode, 403, `${other}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_BAD_SIGNATURE')
  }
  assert.deepEqual(src.hits, [], 'nothing fetched for them')
  // What proxies and browsers make of a path, and imgproxy (and so thumbd) undoes before checking the signature.
  const spellings = [':', '%3A'].flatMap(colon => ['http://', 'http:/'].flatMap(scheme => ['/', '//', '///'].map(slashes =>
    `/i/${signature}${slashes}rs${colon}fit${colon}200${colon}0/q${colon}70/plain/${src.base.replace('http://', scheme)}/a.jpg`)))
  const replies = await Promise.all(spellings.map(url => app.inject({ url })))
  assert.deepEqual(replies.map(r => r.statusCode), spellings.map(() => 200))
  assert.equal(new Set(replies.map(r => r.headers.etag)).size, 1, 'one ETag')
  assert.equal(src.hits.length, 1, `one fetch for ${spellings.length} spellings`)
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

test('a shared GET job stops when the last client waiting for it leaves, not before: its decoder killed, counted cancelled, and the log says which', async (t) => {
  const video = await media('slow-seek')
  // Answers once released: both clients have joined the one fetch by then.
  let release!: () => void
  const released = new Promise<void>(resolve => { release = resolve })
  let hits = 0
  const src = createServer((_req, res) => { hits++; released.then(() => res.writeHead(200, { 'content-length': video.length }).end(video), () => {}) })
  await new Promise<void>(resolve => src.listen(0, '127.0.0.1', resolve))
  t.after(() => { release(); src.closeAllConnections(); src.close() })
  const srcBase = `http://127.0.0.1:${(src.address() as AddressInfo).port}`
  const lines: string[] = []
  const logs = new PassThrough()
  logs.on('data', chunk => lines.push(...String(chunk).split('\n').filter(Boolean)))
  const app = await build(t, { ...SIGNING, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${srcBase}/`, LOG_LEVEL: 'info' }, { logStream: logs })
  const base = await listen(app)
  const url = `${base}${sign(`/vts:8/frame:best/plain/${srcBase}/slow.mp4`)}`
  // The job's decoder is frozen as soon as it is seen: only a kill ends it, so nothing but the server's cancel can.
  const frozen = new Set<number>()
  t.after(() => { for (const pid of frozen) { try { process.kill(pid, 'SIGKILL') } catch {} } })
  const freeze = () => {
    for (const { pid } of decoderProcesses()) if (!frozen.has(pid)) { process.kill(pid, 'SIGSTOP'); frozen.add(pid) }
    return frozen.size
  }
  const clients = [new AbortController(), new AbortController()]
  const pending = [fetch(url, { signal: clients[0]!.signal }).catch(err => err)]
  await waitFor(() => hits === 1, 10_000, 'the fetch to start')
  pending.push(fetch(url, { signal: clients[1]!.signal }).catch(err => err))
  await waitFor(() => lines.filter(line => line.includes('incoming request')).length === 2, 10_000, 'both requests to arrive')
  await sleep(200)
  release()
  await waitFor(() => freeze() === 1, 20_000, 'the shared job\'s decoder to start')
  clients[0]!.abort()
  await sleep(1500)
  assert.equal(decoderProcesses().length, 1, 'the job goes on for the client still waiting')
  clients[1]!.abort()
  // Before: it ran on to its deadline (JOB_TIMEOUT_MS, 30 s), and counted ok when it finished.
  await waitFor(() => app.jobs.stats().ffmpegChildren === 0 && decoderChildren().length === 0, 10_000, 'the decoder to be killed once no client waits')
  for (const result of await Promise.all(pending)) assert.equal((result as Error).name, 'AbortError')
  assert.equal(hits, 1, 'one fetch for both')
  const metrics = (await app.inject({ url: '/metrics' })).body
  assert.match(metrics, /thumbd_jobs_total\{kind="thumbnail",outcome="cancelled"\} 1\n/)
  assert.doesNotMatch(metrics, /thumbd_jobs_total\{kind="thumbnail",outcome="ok"\}/)
  await waitFor(() => lines.filter(line => line.includes('client disconnected')).length === 2, 5000, 'both leavings logged')
  const said = lines.filter(line => line.includes('client disconnected')).map(line => JSON.parse(line).msg as string)
  assert.deepEqual(said, ['client disconnected: the shared fetch and job go on for 1 other request(s)', 'client disconnected: no client is left waiting: the shared fetch and job were cancelled'])
})
