import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, postMedia } from './helper.ts'
import { media, type MediaName } from './media.ts'

test('inline and pool modes give the same bytes for the same input and options', async (t) => {
  const pool = await build(t, { EXECUTION_MODE: 'pool' })
  const inline = await build(t, { EXECUTION_MODE: 'inline' })
  assert.equal(pool.jobs.stats().mode, 'pool')
  assert.equal(inline.jobs.stats().mode, 'inline')
  const cases: Array<[MediaName, string, string]> = [
    ['jpeg', 'image/jpeg', ''],
    ['png', 'image/png', '?format=webp&width=200&height=200&fit=contain'],
    ['gif', 'image/gif', '?format=png'],
    ['mp4-h264', 'video/mp4', '?at=1.2'],
    ['webm-vp9', 'video/webm', '?frame=best&format=avif']
  ]
  for (const [name, type, query] of cases) {
    const body = await media(name)
    const [a, b] = await Promise.all([postMedia(pool, 'thumbnail', body, type, query), postMedia(inline, 'thumbnail', body, type, query)])
    assert.equal(a.statusCode, 200, `${name}${query}: ${a.body}`)
    assert.equal(b.statusCode, 200, `${name}${query}: ${b.body}`)
    assert.ok(a.rawPayload.equals(b.rawPayload), `${name}${query}: same bytes`)
    assert.equal(a.headers.etag, b.headers.etag)
  }
  // The pool really ran them: the main thread did not.
  assert.ok(pool.jobs.stats().completed >= cases.length)
})
