// The result store's key on its own (src/result-store/key.ts), fed as the GET route feeds it: what changes
// the key (source, options that change the bytes, the format Accept chose, cb, FORMAT_QUALITY) and what does
// not (the signature, the signing key, spellings of the same ask).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { entryPath, resultKey } from '../../src/result-store/key.ts'
import { negotiate } from '../../src/routes/options.ts'
import { normalisedOptions, parseProcessingPath } from '../../src/signed-urls/parse.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'

const QUALITY = { jpeg: 80, webp: 79, avif: 63 }

/** The key of a GET URL's path as signed, for a client sending `accept`, as src/routes/signed-url.ts makes it. */
function keyOf (signedUrl: string, accept = 'image/jpeg', defaultQuality: Record<string, number> = QUALITY): string {
  const path = signedUrl.slice(signedUrl.indexOf('/', '/i/'.length))
  const { source, options } = parseProcessingPath(path)
  const format = options.format === 'auto' ? negotiate(accept) : options.format
  return resultKey({ kind: 'image', source, options: normalisedOptions(options), format: format ?? '', defaultQuality })
}

const keyA = Buffer.alloc(32, 1)
const saltA = Buffer.alloc(32, 2)
const keyB = Buffer.alloc(32, 3)
const saltB = Buffer.alloc(32, 4)
const PATH = '/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg@webp'

test('the signature and the signing key do not change the key: rotated keys keep every entry', () => {
  const one = signedUrlPath(PATH, keyA, saltA)
  const other = signedUrlPath(PATH, keyB, saltB)
  assert.notEqual(one, other)
  assert.equal(keyOf(one), keyOf(other))
  assert.equal(keyOf(one), keyOf(`/i/insecure${PATH}`))
  assert.match(keyOf(one), /^[0-9a-f]{64}$/)
})

test('spellings of the same ask share a key; what changes the bytes changes it', () => {
  const base = keyOf(`/i/x${PATH}`)
  // The same ask written otherwise: resizing_type spelt out, width and height as separate options.
  assert.equal(keyOf('/i/x/rt:fill/w:300/h:200/q:75/plain/https://example.com/photos/a.jpg@webp'), base)
  assert.equal(keyOf('/i/x/resize:fill:300:200/quality:75/plain/https://example.com/photos/a.jpg@webp'), base)
  for (const other of [
    '/rs:fill:300:201/q:75/plain/https://example.com/photos/a.jpg@webp',
    '/rs:fill:300:200/q:76/plain/https://example.com/photos/a.jpg@webp',
    '/rs:fill:300:200/q:75/plain/https://example.com/photos/b.jpg@webp',
    '/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg@png',
    '/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg'
  ]) assert.notEqual(keyOf(`/i/x${other}`), base, other)
})

test('cb (cachebuster) changes the key, and each value its own', () => {
  const base = keyOf(`/i/x${PATH}`)
  const one = keyOf('/i/x/cb:1/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg@webp')
  const two = keyOf('/i/x/cachebuster:2/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg@webp')
  assert.notEqual(one, base)
  assert.notEqual(two, base)
  assert.notEqual(one, two)
  assert.equal(keyOf('/i/x/cachebuster:1/rs:fill:300:200/q:75/plain/https://example.com/photos/a.jpg@webp'), one)
})

test('format auto: the format Accept chose is in the key, the rest of Accept is not', () => {
  const auto = '/i/x/rs:fit:300:0/f:auto/plain/https://example.com/a.jpg'
  const webp = keyOf(auto, 'image/webp,*/*')
  const avif = keyOf(auto, 'image/avif,image/webp,*/*')
  const jpeg = keyOf(auto, 'text/html')
  assert.equal(new Set([webp, avif, jpeg]).size, 3)
  assert.equal(keyOf(auto, 'image/webp;q=0.9, image/png'), webp, 'another Accept that chooses WebP: the same entry')
})

test('FORMAT_QUALITY changes the key of URLs that name no quality', () => {
  assert.notEqual(keyOf('/i/x/w:300/plain/https://example.com/a.jpg@webp'), keyOf('/i/x/w:300/plain/https://example.com/a.jpg@webp', 'image/jpeg', { ...QUALITY, webp: 60 }))
  assert.equal(keyOf(`/i/x${PATH}`, 'image/jpeg', { avif: 63, webp: 79, jpeg: 80 }), keyOf(`/i/x${PATH}`), 'the order FORMAT_QUALITY lists them in does not matter')
})

test('an entry\'s path is in folders by its key\'s first hex digits', () => {
  const key = keyOf(`/i/x${PATH}`)
  assert.equal(entryPath(key), `${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`)
})
