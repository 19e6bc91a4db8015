// npm run sign-url as a newcomer runs it: the keys in .env, as the README advises (read as npm start reads
// them), or in flags, whose mistakes are blamed on the flags.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { verifySignature } from '../../src/signed-urls/signature.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const KEY = '943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881'
const SALT = '520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5'

/** package.json's sign-url script, run in `dir` (where npm would be in the checkout) with only PATH of the environment. */
async function signUrl (dir: string, ...args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['sign-url']!
  const [node, ...flags] = script.split(' ').map(word => word.startsWith('scripts/') ? join(ROOT, word) : word)
  assert.equal(node, 'node')
  try {
    const { stdout, stderr } = await run(process.execPath, [...flags, ...args], { cwd: dir, env: { PATH: process.env.PATH } })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number, stdout: string, stderr: string }
    return { code, stdout, stderr }
  }
}

test('npm run sign-url signs with the first key and salt of .env, as the server reads them', async (t) => {
  const dir = tempFolder('thumbd-sign-', t)
  writeFileSync(join(dir, '.env'), `URL_SIGNING_KEYS=${KEY}\nURL_SIGNING_SALTS=${SALT}\n`)
  const path = '/rs:fill:300:200/plain/https://example.com/photo.jpg@webp'
  const { code, stdout, stderr } = await signUrl(dir, path)
  assert.equal(code, 0, stderr)
  const [, signature, signed] = /^\/i\/([^/]+)(\/.*)\n$/.exec(stdout) ?? []
  assert.equal(signed, path)
  assert.ok(verifySignature(signature!, path, [{ key: Buffer.from(KEY, 'hex'), salt: Buffer.from(SALT, 'hex') }]), stdout)
})

test('without keys it says how to make them; a bad flag is blamed on the flag, not on a variable never set', async (t) => {
  const dir = tempFolder('thumbd-sign-', t)
  const none = await signUrl(dir, '/w:320/plain/https://example.com/a.jpg')
  assert.equal(none.code, 2)
  assert.match(none.stderr, /URL_SIGNING_KEYS=\$\(openssl rand -hex 32\)/)
  assert.match(none.stderr, /\.env/)
  const empty = await signUrl(dir, '--key', '', '--salt', SALT, '/w:320/plain/https://example.com/a.jpg')
  assert.equal(empty.code, 2)
  assert.match(empty.stderr, /^--key is empty/m)
  assert.doesNotMatch(empty.stderr, /URL_SIGNING/)
  const notHex = await signUrl(dir, '--key', KEY, '--salt', 'salty', '/w:320/plain/https://example.com/a.jpg')
  assert.match(notHex.stderr, /^--salt is not hex/m)
  const half = await signUrl(dir, '--key', KEY, '/w:320/plain/https://example.com/a.jpg')
  assert.match(half.stderr, /--key and --salt together/)
})
