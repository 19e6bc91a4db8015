import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from './faults/helpers.ts'
import { build, postMedia } from './helper.ts'
import { media, type MediaName } from './media.ts'

test('inline and pool modes give the same bytes for the same input and options, and the pool ran its jobs', async (t) => {
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
  }
  // Who ran them: piscina's own figures. Its utilization comes from the run times of the tasks its threads
  // ran (refreshed once a second, hence the wait); a job run on the main thread leaves it at 0.
  await waitFor(() => pool.jobs.stats().utilization > 0, 3000, 'piscina to report the run time of the pool\'s tasks')
  assert.ok(pool.jobs.stats().threads >= 1, 'the pool has worker threads')
  const scraped = /^thumbd_pool_utilization (\S+)$/m.exec((await pool.inject({ url: '/metrics' })).body)?.[1]
  assert.ok(Number(scraped) > 0, `/metrics says so too (${scraped})`)
  assert.deepEqual([inline.jobs.stats().threads, inline.jobs.stats().utilization], [0, 0], 'inline mode has no pool at all')
})
