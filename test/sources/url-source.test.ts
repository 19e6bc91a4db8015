// URL sources end to end, against a server on loopback that counts every connection it gets.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { createFetcher } from '../../src/sources/fetch-source.ts'
import { AUTH, build, decoded, leftoverTempFiles, leftoverTestTmp } from '../helper.ts'
import { media } from '../media.ts'
import { sleep, waitFor } from '../faults/helpers.ts'

interface Origin { server: Server, port: number, connections: number, base: string }

/** `host` '::' listens on every local address, IPv4 (mapped) and IPv6 alike. */
async function origin (handler: Parameters<typeof createServer>[1], host = '127.0.0.1'): Promise<Origin> {
  const server = createServer(handler)
  const o: Origin = { server, port: 0, connections: 0, base: '' }
  server.on('connection', () => { o.connections++ })
  await new Promise<void>(resolve => server.listen(0, host, resolve))
  o.port = (server.address() as AddressInfo).port
  o.base = `http://127.0.0.1:${o.port}`
  return o
}

let site: Origin
let other: Origin

before(async () => {
  const jpeg = await media('jpeg')
  const mp4 = await media('mp4-h264')
  site = await origin((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const hops = Number(url.searchParams.get('hops') ?? 0)
    switch (url.pathname) {
      case '/image.jpg': return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg)
      case '/video.mp4': return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(mp4)
      case '/text.jpg': return res.writeHead(200, { 'content-type': 'image/jpeg' }).end('just text, not an image')
      case '/redirect': return res.writeHead(302, { location: hops > 1 ? `/redirect?hops=${hops - 1}` : '/image.jpg' }).end()
      case '/redirect-to': return res.writeHead(307, { location: url.searchParams.get('to') ?? '/' }).end()
      case '/missing': return res.writeHead(404, { 'content-type': 'text/plain' }).end('SECRET-UPSTREAM-BODY')
      case '/drip': {
        res.writeHead(200, { 'content-type': 'image/jpeg' })
        res.write(jpeg.subarray(0, 100))
        const timer = setInterval(() => res.write(Buffer.from([0])), 200)
        res.on('close', () => clearInterval(timer))
        return
      }
      case '/declared-huge': return res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).end(jpeg.subarray(0, 10))
      case '/chunked-huge': {
        res.writeHead(200, { 'content-type': 'image/jpeg' })
        res.write(jpeg)
        for (let i = 0; i < 40; i++) res.write(Buffer.alloc(64 * 1024, 1))
        return res.end()
      }
      case '/liar': {
        // Declares 2000 bytes, sends a whole image and more: nothing past the declared length may be taken.
        res.socket!.write('HTTP/1.1 200 OK\r\ncontent-type: image/jpeg\r\ncontent-length: 2000\r\nconnection: close\r\n\r\n')
        res.socket!.end(Buffer.concat([jpeg, Buffer.alloc(512 * 1024, 2)]))
        return
      }
      default: return res.writeHead(404).end()
    }
  })
  other = await origin((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg))
})

after(() => {
  site.server.close()
  other.server.close()
  assert.deepEqual(leftoverTestTmp(), [], 'no temp file left in TMP_DIR')
})

const postUrl = (app: Awaited<ReturnType<typeof build>>, url: string, options: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: '/api/thumbnail', headers: AUTH, payload: { url, ...options } })

describe('URL sources with ALLOW_PRIVATE_SOURCES=true (the test server is on loopback)', () => {
  test('media, redirects, slow drip, lying lengths, 404', async (t) => {
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${site.base}/`, MAX_SOURCE_BYTES: String(1024 * 1024), FETCH_TIMEOUT_MS: '1500' })
    const cases: Array<[string, number, string?]> = [
      ['/image.jpg', 200],
      ['/video.mp4', 200],
      ['/redirect?hops=3', 200],
      ['/redirect?hops=4', 502, 'THUMBD_SOURCE_FETCH_FAILED'],
      ['/text.jpg', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
      ['/missing', 502, 'THUMBD_SOURCE_FETCH_FAILED'],
      ['/drip', 502, 'THUMBD_SOURCE_FETCH_FAILED'],
      ['/declared-huge', 413, 'THUMBD_PAYLOAD_TOO_LARGE'],
      ['/chunked-huge', 413, 'THUMBD_PAYLOAD_TOO_LARGE'],
      ['/liar', 422, 'THUMBD_MEDIA_UNREADABLE']
    ]
    for (const [path, status, code] of cases) {
      const res = await postUrl(app, `${site.base}${path}`, { width: 100 })
      assert.equal(res.statusCode, status, `${path}: ${res.body}`)
      if (code !== undefined) assert.equal(res.json().code, code, path)
      assert.ok(!res.body.includes('SECRET-UPSTREAM-BODY'), 'upstream body never echoed')
      assert.deepEqual(leftoverTempFiles(app), [], path)
    }
    const missing = await postUrl(app, `${site.base}/missing`)
    assert.match(missing.json().message, /404/)
  })

  test('options in the JSON body, merged over the query; unknown ones refused', async (t) => {
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${site.base}/` })
    const res = await app.inject({ method: 'POST', url: '/api/thumbnail?width=50', headers: AUTH, payload: { url: `${site.base}/image.jpg`, width: 120, format: 'png' } })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'image/png')
    assert.equal((await decoded(res.rawPayload)).width, 120)
    const bad = await postUrl(app, `${site.base}/image.jpg`, { colour: 'red' })
    assert.equal(bad.json().code, 'THUMBD_BAD_OPTIONS')
    assert.equal((await app.inject({ method: 'POST', url: '/api/thumbnail', headers: AUTH, payload: { width: 10 } })).json().code, 'THUMBD_BAD_OPTIONS')
  })

  test('every redirect hop is checked again: off ALLOWED_SOURCES means 400, and the target never sees a connection', async (t) => {
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${site.base}/` })
    const before = other.connections
    for (const to of [`${other.base}/image.jpg`, 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'file:///etc/passwd']) {
      const res = await postUrl(app, `${site.base}/redirect-to?to=${encodeURIComponent(to)}`)
      assert.equal(res.statusCode, 400, `${to}: ${res.body}`)
      assert.equal(res.json().code, 'THUMBD_SOURCE_FORBIDDEN')
    }
    assert.equal(other.connections, before)
  })

  test('a burst of distinct URLs past MAX_CONCURRENT_FETCHES is refused 503 OVERLOADED with Retry-After before it is fetched; the fetches under way still finish', async (t) => {
    const jpeg = await media('jpeg')
    let release!: () => void
    const released = new Promise<void>(resolve => { release = resolve })
    // Answers only once released: the first fetches stay under way meanwhile.
    const held = await origin((_req, res) => { released.then(() => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg), () => {}) })
    t.after(() => { release(); held.server.closeAllConnections(); held.server.close() })
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${held.base}/`, MAX_CONCURRENT_FETCHES: '2' })
    const photo = (n: number) => postUrl(app, `${held.base}/photo-${n}.jpg`)
    const first = [photo(1), photo(2)]
    await waitFor(() => held.connections === 2, 5000, 'the first two fetches to connect')
    // Before: each of these was fetched too, and waited with the others.
    const burst = await Promise.race([Promise.all([3, 4, 5, 6].map(photo)), sleep(5000).then(() => 'still waiting')])
    assert.notEqual(burst, 'still waiting', 'refused at once, not fetched')
    for (const res of burst as Awaited<ReturnType<typeof photo>>[]) {
      assert.equal(res.statusCode, 503, res.body)
      assert.equal(res.json().code, 'THUMBD_OVERLOADED')
      assert.ok(Number(res.headers['retry-after']) >= 1)
    }
    assert.equal(held.connections, 2, 'the refused URLs were never fetched')
    release()
    assert.deepEqual((await Promise.all(first)).map(res => res.statusCode), [200, 200])
    assert.equal((await photo(7)).statusCode, 200, 'a slot is free again once a fetch is done')
    assert.match((await app.inject({ url: '/metrics' })).body, /thumbd_shed_total\{reason="fetches"\} 4\n/)
  })

  test('origins that drip below FETCH_MIN_BYTES_PER_SECOND are cut with 502 within a few seconds, so their slots serve other clients again', async (t) => {
    const jpeg = await media('jpeg')
    let open = 0
    // /slow: a JPEG's first bytes, then 1 byte a second (as the red team's origin did); anything else: a whole photo.
    const dripping = await origin((req, res) => {
      if (!req.url!.startsWith('/slow')) return res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg)
      open++
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': '100000' })
      res.write(jpeg.subarray(0, 3))
      const timer = setInterval(() => res.write(Buffer.from([0])), 1000)
      res.on('close', () => { clearInterval(timer); open-- })
    })
    t.after(() => { dripping.server.closeAllConnections(); dripping.server.close() })
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${dripping.base}/`, MAX_CONCURRENT_FETCHES: '4', FETCH_TIMEOUT_MS: '60000' })
    const started = Date.now()
    const drippers = [1, 2, 3, 4].map(n => postUrl(app, `${dripping.base}/slow?${n}`))
    await waitFor(() => open === 4, 5000, 'the drippers to hold every slot')
    assert.equal((await postUrl(app, `${dripping.base}/photo.jpg`)).statusCode, 503, 'every slot is held meanwhile')
    // Before: each held its slot for all of FETCH_TIMEOUT_MS (60 s here), and every other URL got 503.
    const cut = await Promise.race([Promise.all(drippers), sleep(10_000).then(() => 'still held')])
    assert.notEqual(cut, 'still held', 'the drippers were cut long before FETCH_TIMEOUT_MS')
    for (const res of cut as Awaited<ReturnType<typeof postUrl>>[]) {
      assert.equal(res.statusCode, 502, res.body)
      assert.equal(res.json().code, 'THUMBD_SOURCE_FETCH_FAILED')
      assert.match(res.json().message, /less than 16384 bytes\/s/)
    }
    assert.ok(Date.now() - started < 10_000)
    await waitFor(() => open === 0, 5000, 'the dripping connections to close')
    const others = await Promise.all([1, 2, 3, 4].map(n => postUrl(app, `${dripping.base}/photo-${n}.jpg`, { width: 64 })))
    assert.deepEqual(others.map(res => res.statusCode), [200, 200, 200, 200])
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('an origin that sends above FETCH_MIN_BYTES_PER_SECOND is not cut, however long its body takes', async (t) => {
    // A photo and padding after its end, 50 KB every 400 ms (125 KB/s against the floor's 16 KB/s): ~4.5 s,
    // past two of the floor's 2 s windows. Bytes that were not counted would be cut at the first one.
    const body = Buffer.concat([await media('jpeg'), Buffer.alloc(550_000)])
    const steady = await origin((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(body.length) })
      let at = 0
      const send = () => {
        res.write(body.subarray(at, at + 50_000))
        at += 50_000
        if (at >= body.length) { clearInterval(timer); res.end() }
      }
      const timer = setInterval(send, 400)
      send()
      res.on('close', () => clearInterval(timer))
    })
    t.after(() => { steady.server.closeAllConnections(); steady.server.close() })
    const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${steady.base}/`, FETCH_TIMEOUT_MS: '30000' })
    const started = Date.now()
    const res = await postUrl(app, `${steady.base}/steady.jpg`, { width: 64 })
    assert.equal(res.statusCode, 200, res.body)
    assert.ok(Date.now() - started > 4000, 'the body took longer than two windows')
  })
})

describe('URL sources with ALLOW_PRIVATE_SOURCES=false', () => {
  test('every loopback spelling is refused and no connection reaches the server', async (t) => {
    const p = site.port
    // ALLOWED_SOURCES names the port for each host, so the address checks (not the port rule) must refuse them.
    const allowed = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::ffff:7f00:1]'].map(h => `http://${h}:${p}/`).join(',')
    const app = await build(t, { ALLOWED_SOURCES: allowed })
    const before = site.connections
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::ffff:127.0.0.1]', '2130706433', '0177.0.0.1', '0x7f.0.0.1', '0x7f000001', '127.1']) {
      const res = await postUrl(app, `http://${host}:${p}/image.jpg`)
      assert.equal(res.statusCode, 400, `${host}: ${res.body}`)
      assert.equal(res.json().code, 'THUMBD_SOURCE_FORBIDDEN', host)
    }
    // A redirect chain would start on loopback too: refused at the first hop.
    assert.equal((await postUrl(app, `http://localhost:${p}/redirect?hops=2`)).statusCode, 400)
    assert.equal(site.connections, before, 'no connection reached the test server')
  })

  test('a hostname whose DNS answers are loopback is refused before any connection, whatever the spelling', async () => {
    // The answers all point back at a server here that counts connections (listening on every loopback
    // address, IPv4 and IPv6): a broken guard would connect to it and be counted, and could not leave
    // this machine whatever it did. The other non-public ranges are isPublicAddress's (url-policy.test.ts).
    const counter = await origin((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(), '::')
    try {
      for (const address of ['127.0.0.1', '127.0.0.1 and ::1', '::1', '::ffff:127.0.0.1', '0.0.0.0', '::']) {
        const answers = address.split(' and ').map(a => ({ address: a, family: a.includes(':') ? 6 : 4 }))
        const fetcher = createFetcher({
          policy: { allowPrivate: false, allowedPrefixes: [new URL(`http://media.example.test:${counter.port}/`)] },
          timeoutMs: 2000,
          maxBytes: 1024,
          resolve: async () => answers
        })
        try {
          // Refused for the address it resolves to (not for the URL, which its allowed prefix lets through).
          await assert.rejects(fetcher.fetchSource(`http://media.example.test:${counter.port}/a.jpg`, AbortSignal.timeout(2000)), { code: 'THUMBD_SOURCE_FORBIDDEN', message: /non-public address/ }, address)
        } finally {
          await fetcher.close()
        }
        assert.equal(counter.connections, 0, `${address}: no connection was made`)
      }
    } finally {
      counter.server.close()
    }
  })
})
