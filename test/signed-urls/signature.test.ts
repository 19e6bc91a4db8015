import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseSigningKeys, signedUrlPath, signPath, verifySignature } from '../../src/signed-urls/signature.ts'

// Vectors: imgproxy's own README example, and one checked against a running imgproxy 4.0.12.
const README = {
  key: '943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881',
  salt: '520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5',
  path: '/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg',
  signature: 'm3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc'
}
const LIVE = {
  key: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  salt: 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210',
  path: '/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/dragonfly_4mp_baseline.jpg@jpg',
  signature: 'DX3SBbpuc-fgbkANUTwn7Vyl7rL-V0MW3_crsYj5eas'
}
const pairOf = (v: typeof README) => parseSigningKeys([v.key], [v.salt])[0]!

test('signPath gives imgproxy\'s signatures for both vectors', () => {
  for (const v of [README, LIVE]) {
    const { key, salt } = pairOf(v)
    assert.equal(signPath(v.path, key, salt), v.signature)
    // imgproxy adds the leading '/' when a caller cut it off; so does signPath.
    assert.equal(signPath(v.path.slice(1), key, salt), v.signature)
  }
})

test('signedUrlPath prefixes /i/<signature>', () => {
  const { key, salt } = pairOf(README)
  assert.equal(signedUrlPath(README.path, key, salt), `/i/${README.signature}${README.path}`)
  assert.equal(signedUrlPath(README.path.slice(1), key, salt), `/i/${README.signature}${README.path}`)
})

test('verifySignature: any pair of several may have signed (rotation)', () => {
  const keys = parseSigningKeys([README.key, LIVE.key], [README.salt, LIVE.salt])
  assert.equal(verifySignature(README.signature, README.path, keys), true)
  assert.equal(verifySignature(LIVE.signature, LIVE.path, keys), true)
  assert.equal(verifySignature(LIVE.signature, LIVE.path, keys.slice(0, 1)), false, 'the other pair does not sign it')
  assert.equal(verifySignature(README.signature, README.path, []), false, 'no keys: nothing is signed')
})

/** The same 32 bytes written with other unused low bits in the last character: what Go and Buffer decode alike. */
function otherSpellings (signature: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(signature.at(-1)!)
  return [0, 1, 2, 3].map(low => alphabet[(last & ~3) | low]!).filter(c => c !== signature.at(-1)).map(c => signature.slice(0, -1) + c)
}

test('verifySignature refuses other paths and mangled signatures, and every spelling but the canonical one', () => {
  const keys = [pairOf(README)]
  assert.equal(verifySignature(README.signature, README.path.replace('300:300', '300:301'), keys), false)
  assert.equal(verifySignature(README.signature, `${README.path}@png`, keys), false)
  const flipped = (README.signature[0] === 'A' ? 'B' : 'A') + README.signature.slice(1)
  for (const other of otherSpellings(README.signature)) assert.ok(Buffer.from(other, 'base64url').equals(Buffer.from(README.signature, 'base64url')), 'the same bytes')
  for (const bad of ['', 'insecure', flipped, `${README.signature}=`, README.signature.slice(0, 42), `${README.signature}A`,
    README.signature.replace('-', '+'), Buffer.from(Buffer.from(README.signature, 'base64url')).toString('base64'), ...otherSpellings(README.signature)]) {
    assert.equal(verifySignature(bad, README.path, keys), false, bad)
  }
})

test('parseSigningKeys: hex pairs, trimmed; clear errors for counts, empty and non-hex entries', () => {
  const [pair] = parseSigningKeys([` ${README.key} `], [README.salt.toUpperCase()])
  assert.equal(Buffer.from(pair!.key).toString('hex'), README.key)
  assert.equal(Buffer.from(pair!.salt).toString('hex'), README.salt)
  assert.deepEqual(parseSigningKeys([], []), [])
  assert.throws(() => parseSigningKeys([README.key, LIVE.key], [README.salt]), /one salt per URL_SIGNING_KEYS entry \(2 keys, 1 salts\)/)
  assert.throws(() => parseSigningKeys([README.key, ''], [README.salt, LIVE.salt]), /URL_SIGNING_KEYS entry 2 is empty/)
  assert.throws(() => parseSigningKeys(['abc'], ['00']), /URL_SIGNING_KEYS entry 1 is not hex/)
  assert.throws(() => parseSigningKeys(['00'], ['xyz0']), /URL_SIGNING_SALTS entry 1 is not hex/)
})
