import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { build } from '../helper.ts'
import { media } from '../media.ts'

test('every configured key works, and no key ever reaches the logs', async (t) => {
  const logs = new PassThrough()
  let logged = ''
  logs.on('data', (chunk: Buffer) => { logged += chunk.toString() })
  const app = await build(t, { API_KEYS: 'first-key-abcdef,second-key-ghijkl', LOG_LEVEL: 'trace' }, { logStream: logs })
  const jpeg = await media('jpeg')
  for (const key of ['first-key-abcdef', 'second-key-ghijkl', 'wrong-key-mnopqr']) {
    const res = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { authorization: `Bearer ${key}`, 'content-type': 'image/jpeg' }, payload: jpeg })
    assert.equal(res.statusCode, key.startsWith('wrong') ? 401 : 200)
  }
  assert.ok(logged.includes('request completed'), 'requests were logged')
  for (const key of ['first-key', 'second-key', 'wrong-key']) assert.ok(!logged.includes(key), `${key} not in logs`)
})
