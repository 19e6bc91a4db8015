// fn: and att: over a GET URL: the file name in Content-Disposition keeps no path separator, control character
// or bidi control, whether it comes from fn: (percent-encoded or base64) or from the source's last segment.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { safeFileName } from '../../src/routes/file-name.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { fileOrigin } from '../file-origin.ts'
import { build } from '../helper.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')

test('safeFileName drops separators, controls, bidi controls and leading dots', () => {
  assert.equal(safeFileName('../../etc/passwd'), 'etcpasswd')
  assert.equal(safeFileName('..\\..\\win.ini'), 'win.ini')
  assert.equal(safeFileName('photo\u202Egpj.exe'), 'photogpj.exe')
  for (const c of ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u2066', '\u2067', '\u2068', '\u2069', '\u0000', '\u001F', '\u007F', '\u0085', '\u2028', '\u2029']) {
    assert.equal(safeFileName(`a${c}b`), 'ab', `U+${c.codePointAt(0)!.toString(16)}`)
  }
  assert.equal(safeFileName('été à la mer'), 'été à la mer')
  assert.equal(safeFileName('/..\u202E/'), undefined)
})

test('fn: with ../ or U+202E, and a source named with U+202E, give a plain file name', async (t) => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#808080' } }).jpeg().toBuffer()
  const base = await fileOrigin(t, { 'evil%E2%80%AEgpj.jpg': jpeg, 'a.jpg': jpeg })
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` })
  const get = (options: string, file: string) => app.inject({ url: signedUrlPath(`/${options}/${Buffer.from(`${base}/${file}`).toString('base64url')}`, KEY, SALT) })
  const cases: Array<[string, string, string]> = [
    ['fn:..%2F..%2Fetc%2Fpasswd/w:10', 'a.jpg', 'inline; filename="etcpasswd.jpg"'],
    [`fn:${Buffer.from('../../etc/passwd').toString('base64url')}:1/w:10`, 'a.jpg', 'inline; filename="etcpasswd.jpg"'],
    [`fn:${Buffer.from('invoice\u202Efdp.exe').toString('base64url')}:1/w:10`, 'a.jpg', 'inline; filename="invoicefdp.exe.jpg"'],
    ['att:1/w:10', 'evil%E2%80%AEgpj.jpg', 'attachment; filename="evilgpj.jpg"']
  ]
  for (const [options, file, expected] of cases) {
    const res = await get(options, file)
    assert.equal(res.statusCode, 200, `${options}: ${res.body}`)
    assert.equal(res.headers['content-disposition'], expected, options)
  }
})
