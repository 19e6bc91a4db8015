import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signImgproxyPath, signedThumbnailPath } from '../../load/imgproxy-url.ts'
import { parseProcessingPath, redenormalizePath } from '../../src/signed-urls/parse.ts'
import { parseSigningKeys, verifySignature } from '../../src/signed-urls/signature.ts'

test("imgproxy's signatures, as its documentation and a running imgproxy 4.0 compute them", () => {
  // The example key and salt of imgproxy's documentation.
  assert.equal(signImgproxyPath('/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg',
    '943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', '520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5'), 'm3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc')
  // Accepted by imgproxy 4.0.12 built from its source.
  assert.equal(signImgproxyPath('/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/dragonfly_4mp_baseline.jpg@jpg',
    '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210'), 'DX3SBbpuc-fgbkANUTwn7Vyl7rL-V0MW3_crsYj5eas')
})

test('the peer bench signs a fresh URL per request: a distinct source each, that thumbd reads as the photo plus ?n=', () => {
  const signed = { source: 'http://127.0.0.1:18081/a%20b.jpg', format: 'jpeg', width: 320, key: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', salt: 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210' }
  const [first, second] = [signedThumbnailPath(signed, 1), signedThumbnailPath(signed, 2)]
  assert.notEqual(first, second)
  const [, signature, ...rest] = first.split('/')
  const path = `/${rest.join('/')}`
  assert.ok(verifySignature(signature!, redenormalizePath(path), parseSigningKeys([signed.key], [signed.salt])))
  const parsed = parseProcessingPath(path)
  assert.equal(parsed.source, 'http://127.0.0.1:18081/a%20b.jpg?n=1')
  assert.equal(parsed.extension, 'jpg')
  // Without a nonce: the plain URL as before, which a running imgproxy 4.0.12 accepted (above).
  assert.equal(signedThumbnailPath(signed), `/${signImgproxyPath('/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/a%20b.jpg@jpg', signed.key, signed.salt)}/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/a%20b.jpg@jpg`)
})
