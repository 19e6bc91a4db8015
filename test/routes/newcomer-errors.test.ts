// The mistakes a newcomer makes in the first hour, each answered with what to do instead (issue 48): a key
// missing, malformed or unknown; a route asked with the wrong method or not at all; a signed GET URL on a
// server without signing keys; a loopback origin that needs two settings, named together.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AUTH, TEST_KEY, build } from '../helper.ts'
import { media } from '../media.ts'

const json = (res: { json (): unknown }) => res.json() as { statusCode: number, code: string, message: string }

test('401 says which mistake it was, names the Bearer scheme, and never echoes a key', async (t) => {
  // A busy machine must not shed the one request that has a good key: no event-loop guard, a long queue bound.
  const app = await build(t, { API_KEYS: `${TEST_KEY},second-secret-key`, PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', MAX_QUEUE_WAIT_MS: '60000' })
  const jpeg = await media('jpeg')
  const cases: Array<[string | undefined, RegExp]> = [
    [undefined, /no Authorization header: send "Authorization: Bearer <key>"/],
    [`Basic ${Buffer.from('user:pass').toString('base64')}`, /not of the form "Bearer <key>"/],
    ['Bearer', /not of the form "Bearer <key>"/],
    [`${TEST_KEY}`, /not of the form "Bearer <key>"/],
    ['Bearer not-a-configured-key', /the key is not one of this server's API_KEYS/]
  ]
  const messages = new Set<string>()
  for (const [authorization, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { 'content-type': 'image/jpeg', ...(authorization === undefined ? {} : { authorization }) }, payload: jpeg })
    assert.equal(res.statusCode, 401, res.body)
    assert.equal(json(res).code, 'THUMBD_UNAUTHORIZED')
    assert.match(res.headers['www-authenticate'] as string, /^Bearer realm="thumbd"$/)
    assert.match(json(res).message, message, String(authorization))
    for (const secret of [TEST_KEY, 'second-secret-key', 'not-a-configured-key', 'dXNlcjpwYXNz']) assert.ok(!res.body.includes(secret), `${secret} not in the reply`)
    messages.add(json(res).message)
  }
  assert.equal(messages.size, 3, 'missing, malformed and unknown read apart')
  const ok = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: jpeg })
  assert.equal(ok.statusCode, 200)
  assert.equal(ok.headers['www-authenticate'], undefined)
})

test('a known path with the wrong method is 405 with Allow; an unknown one is 404 pointing to /docs', async (t) => {
  const app = await build(t)
  const get = await app.inject({ method: 'GET', url: '/api/thumbnail?width=100', headers: AUTH })
  assert.equal(get.statusCode, 405, get.body)
  assert.equal(get.headers.allow, 'POST')
  assert.equal(json(get).code, 'THUMBD_METHOD_NOT_ALLOWED')
  assert.match(json(get).message, /GET \/api\/thumbnail: this route takes POST \(see \/docs\)/)
  // Without a key too: which methods a public path takes is no secret, and says more than 401 would.
  const health = await app.inject({ method: 'POST', url: '/health' })
  assert.equal(health.statusCode, 405)
  assert.equal(health.headers.allow, 'GET, HEAD')
  const signed = await app.inject({ method: 'POST', url: '/i/abc/w:10/plain/https://example.com/a.jpg' })
  assert.equal(signed.statusCode, 405)
  assert.equal(signed.headers.allow, 'GET, HEAD')

  for (const url of ['/api/thumbnails', '/nothing', '/api/thumbnail/extra']) {
    const res = await app.inject({ method: 'GET', url, headers: AUTH })
    assert.equal(res.statusCode, 404, url)
    assert.equal(res.headers.allow, undefined)
    assert.equal(json(res).code, 'THUMBD_NOT_FOUND')
    assert.match(json(res).message, new RegExp(`^Route GET ${url.replaceAll('/', '\\/')} not found: every route is listed at /docs`))
  }
  assert.equal((await app.inject({ url: '/docs' })).statusCode < 400, true, '/docs, where the 404 points, answers')
})

test('a signed GET URL on a server without URL_SIGNING_KEYS says GET URLs are off and what turns them on', async (t) => {
  const off = await build(t)
  const url = `/i/${'A'.repeat(43)}/w:100/plain/https://example.com/photo.jpg`
  const res = await off.inject({ url })
  assert.equal(res.statusCode, 403)
  assert.equal(json(res).code, 'THUMBD_BAD_SIGNATURE')
  assert.match(json(res).message, /GET URLs are off on this server: set URL_SIGNING_KEYS and URL_SIGNING_SALTS .* and restart it/)
  // With keys, a wrong signature is still just that.
  const on = await build(t, { URL_SIGNING_KEYS: 'aa'.repeat(32), URL_SIGNING_SALTS: 'bb'.repeat(32) })
  assert.match(json(await on.inject({ url })).message, /^Bad URL signature: it does not match this path$/)
})

test('a loopback origin on its own port is refused once, naming both settings it needs', async (t) => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{}, 'http://127.0.0.1:8000/photo.jpg', /port 8000 is not a default port: .*ALLOWED_SOURCES entry names it \(e\.g\. http:\/\/127\.0\.0\.1:8000\/\); 127\.0\.0\.1 is not a public address either, so also set ALLOW_PRIVATE_SOURCES=true/],
    [{}, 'http://localhost:8000/photo.jpg', /ALLOWED_SOURCES entry names it .*; localhost is not a public address either, so also set ALLOW_PRIVATE_SOURCES=true/],
    [{ ALLOWED_SOURCES: 'https://cdn.example.com/' }, 'http://127.0.0.1:8000/photo.jpg', /not under ALLOWED_SOURCES; 127\.0\.0\.1 is not a public address either, so also set ALLOW_PRIVATE_SOURCES=true/],
    // One setting missing: only it is named.
    [{ ALLOW_PRIVATE_SOURCES: 'true' }, 'http://127.0.0.1:8000/photo.jpg', /^Source not allowed: port 8000 is not a default port: [^;]*\)$/],
    [{ ALLOWED_SOURCES: 'http://127.0.0.1:8000/' }, 'http://127.0.0.1:8000/photo.jpg', /^Source not allowed: 127\.0\.0\.1 is not a public address \(set ALLOW_PRIVATE_SOURCES=true/],
    // A public host on its own port needs ALLOWED_SOURCES only.
    [{}, 'http://93.184.215.14:8080/photo.jpg', /^Source not allowed: port 8080 is not a default port: [^;]*\)$/]
  ]
  for (const [env, source, message] of cases) {
    const app = await build(t, env)
    const res = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url: source } })
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(json(res).code, 'THUMBD_SOURCE_FORBIDDEN')
    assert.match(json(res).message, message, `${JSON.stringify(env)} ${source}`)
  }
})
