import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signImgproxyPath } from '../../load/peer.ts'

test("imgproxy's signatures, as its documentation and a running imgproxy 4.0 compute them", () => {
  // The example key and salt of imgproxy's documentation.
  assert.equal(signImgproxyPath('/rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg',
    '943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', '520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5'), 'm3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc')
  // Accepted by imgproxy 4.0.12 built from its source.
  assert.equal(signImgproxyPath('/rs:fit:320:0/q:80/plain/http://127.0.0.1:18081/dragonfly_4mp_baseline.jpg@jpg',
    '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210'), 'DX3SBbpuc-fgbkANUTwn7Vyl7rL-V0MW3_crsYj5eas')
})
