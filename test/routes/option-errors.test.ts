// What a newcomer's mistakes get back: every refusal of an option, on every POST route and whatever carried
// it (query string, JSON body, multipart field), names the option and says what it accepts; a body sent the
// wrong way says how to send it, at any size.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { AUTH, build } from '../helper.ts'

interface Refusal { statusCode: number, code: string, message: string }

async function refusal (app: FastifyInstance, url: string, contentType: string, payload: string | Buffer): Promise<Refusal> {
  const res = await app.inject({ method: 'POST', url, headers: { ...AUTH, 'content-type': contentType }, payload })
  return { ...(res.json() as Refusal), statusCode: res.statusCode }
}

/** Asserts a 400 BAD_OPTIONS whose message contains every piece. */
function assertNames (got: Refusal, ...pieces: string[]) {
  assert.equal(got.statusCode, 400, got.message)
  assert.equal(got.code, 'THUMBD_BAD_OPTIONS')
  for (const piece of pieces) assert.ok(got.message.includes(piece), `"${piece}" in: ${got.message}`)
  assert.doesNotMatch(got.message, /querystring|must NOT have|\^|\\d/, 'no validator jargon, no raw pattern')
}

const JPEG = 'image/jpeg'
const BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0])
const multipart = (fields: Record<string, string>) => {
  const parts = Object.entries(fields).map(([name, value]) => `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
  return parts.join('') + '--B\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nxxxx\r\n--B--\r\n'
}

describe('option errors name the option and what it accepts', () => {
  test('an unknown option is named, with the options the route knows, on every route and every carrier', async (t) => {
    const app = await build(t, { POOL_THREADS: '1' })
    const known: Record<string, string[]> = {
      thumbnail: ['width', 'height', 'fit', 'format', 'quality', 'at', 'frame', 'seek'],
      resize: ['width', 'position', 'background', 'withoutEnlargement'],
      hash: ['algorithms', 'at', 'frame'],
      storyboard: ['interval', 'count', 'columns', 'width', 'sprite']
    }
    for (const [route, options] of Object.entries(known)) {
      assertNames(await refusal(app, `/api/${route}?widht=320`, JPEG, BYTES), 'unknown option "widht"', ...options)
      assertNames(await refusal(app, `/api/${route}`, 'application/json', JSON.stringify({ url: 'https://example.com/a.jpg', widht: 320 })), 'unknown option "widht"', 'url', ...options)
      assertNames(await refusal(app, `/api/${route}`, 'multipart/form-data; boundary=B', multipart({ widht: '320' })), 'unknown option "widht"', ...options)
    }
    assertNames(await refusal(app, '/api/info?width=3', JPEG, BYTES), 'unknown option "width"', 'no options')
    assertNames(await refusal(app, '/api/thumbnail', 'application/json', JSON.stringify({ width: 3 })), 'url is missing', 'http(s) URL')
  })

  test('a bad value is named with what the option accepts: allowed values, a range, or its form', async (t) => {
    const app = await build(t, { POOL_THREADS: '1' })
    const cases: Array<[string, string[]]> = [
      ['/api/thumbnail?format=bmp', ['format', '"bmp"', 'jpeg, png, webp, avif, gif, auto']],
      ['/api/thumbnail?fit=crop', ['fit', 'cover, contain, fill, inside, outside']],
      ['/api/thumbnail?at=-1', ['at', '"-1"', 'seconds (12.5)', 'percentage of the duration (10%)']],
      ['/api/thumbnail?frame=first', ['frame', 'exact, best']],
      ['/api/thumbnail?seek=fast', ['seek', 'exact, keyframe']],
      ['/api/thumbnail?width=99999', ['width', 'from 1 to 8192', '99999']],
      ['/api/thumbnail?width=wide', ['width', 'an integer from 1 to 8192', '"wide"']],
      ['/api/thumbnail?quality=0', ['quality', 'from 1 to 100']],
      ['/api/resize?background=red', ['background', 'RRGGBB or RRGGBBAA']],
      ['/api/resize?position=top', ['position', 'north', 'attention, entropy']],
      ['/api/resize?withoutEnlargement=maybe', ['withoutEnlargement', 'true or false']],
      ['/api/hash?algorithms=SHA256', ['algorithms', 'sha256, sha512']],
      ['/api/storyboard?format=png', ['format', 'jpeg, webp']],
      ['/api/storyboard?interval=0', ['interval', 'from 0.1 to 3600']],
      ['/api/storyboard?sprite=a%20b', ['sprite', 'without spaces']]
    ]
    for (const [url, pieces] of cases) assertNames(await refusal(app, url, JPEG, BYTES), ...pieces)
    // The same words for JSON and multipart carriers.
    assertNames(await refusal(app, '/api/thumbnail', 'application/json', JSON.stringify({ url: 'https://example.com/a.jpg', format: 'bmp' })), 'format', 'jpeg, png, webp, avif, gif, auto')
    assertNames(await refusal(app, '/api/resize', 'multipart/form-data; boundary=B', multipart({ format: 'bmp' })), 'format', 'jpeg, png, webp, avif, gif, auto')
  })
})

describe('what a refusal repeats of the client\'s text', () => {
  test('a long value or option name comes back cut short, and a newline in it escaped', async (t) => {
    const app = await build(t, { POOL_THREADS: '1' })
    const long = 'x'.repeat(60_000)
    const value = await refusal(app, '/api/thumbnail', 'application/json', JSON.stringify({ url: 'https://example.com/a.jpg', format: long }))
    assertNames(value, 'format', 'jpeg, png')
    assert.ok(value.message.length < 300, `${value.message.length} characters`)
    const name = await refusal(app, '/api/thumbnail', 'application/json', JSON.stringify({ url: 'https://example.com/a.jpg', [`a\nb${long}`]: 1 }))
    assert.equal(name.code, 'THUMBD_BAD_OPTIONS')
    assert.ok(name.message.length < 500, `${name.message.length} characters`)
    assert.ok(name.message.includes('"a\\nb'), name.message)
    assert.ok(!name.message.includes('\n'), 'no raw newline')
  })
})

describe('a body sent the wrong way is told how to send it', () => {
  const HOW = 'send the media as the request body'

  test('text/plain of any size, and curl\'s default form type, get the 415 that says how to send media', async (t) => {
    const app = await build(t, { POOL_THREADS: '1' })
    for (const [type, payload] of [
      ['text/plain', 'hello'],
      ['text/plain', Buffer.alloc(100 * 1024, 0x61)],
      ['application/x-www-form-urlencoded', BYTES],
      ['application/x-www-form-urlencoded', Buffer.alloc(100 * 1024, 0xff)]
    ] as const) {
      const got = await refusal(app, '/api/thumbnail', type, payload)
      assert.equal(got.statusCode, 415, `${type}, ${payload.length} bytes: ${got.message}`)
      assert.equal(got.code, 'THUMBD_UNSUPPORTED_MEDIA')
      assert.ok(got.message.includes(HOW), got.message)
      assert.ok(got.message.includes(`Content-Type ${type}`), got.message)
    }
    const form = await refusal(app, '/api/thumbnail', 'application/x-www-form-urlencoded', BYTES)
    assert.match(form.message, /curl --data-binary sends this type/)
  })

  test('a JSON body over 64 KiB is a 413 about the JSON body, not about the source', async (t) => {
    const app = await build(t, { POOL_THREADS: '1' })
    const got = await refusal(app, '/api/thumbnail', 'application/json', JSON.stringify({ url: `https://example.com/${'a'.repeat(70_000)}` }))
    assert.equal(got.statusCode, 413)
    assert.equal(got.code, 'THUMBD_PAYLOAD_TOO_LARGE')
    assert.match(got.message, /the JSON body is over 65536 bytes/)
    assert.match(got.message, /send the media itself as the request body/)
    assert.doesNotMatch(got.message, /source/i)
  })
})
