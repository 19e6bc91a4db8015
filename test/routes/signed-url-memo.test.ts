// The memo of recent GET-URL replies (src/signed-urls/result-memo.ts): a miss storm spread over time, where
// most requests arrive after the first one finished, still makes one fetch and one job, over real HTTP.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { createResultMemo } from '../../src/signed-urls/result-memo.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'
import { listen, sleep } from '../faults/helpers.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')

async function setup (t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const photo = await media('jpeg-large')
  const hits: string[] = []
  const origin = createServer((req, res) => {
    hits.push(req.url!)
    res.writeHead(200, { 'content-length': photo.length }).end(photo)
  })
  await new Promise<void>(resolve => origin.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => origin.close(resolve)))
  const src = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src}/`, ...env })
  const base = await listen(app)
  const url = `${base}${signedUrlPath(`/rs:fill:300:200/q:75/plain/${src}/a.jpg@webp`, KEY, SALT)}`
  const get = async () => {
    const res = await fetch(url)
    return { status: res.status, type: res.headers.get('content-type'), etag: res.headers.get('etag'), body: Buffer.from(await res.arrayBuffer()) }
  }
  const metric = async (pattern: RegExp) => Number(pattern.exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? 0)
  return { get, hits, jobs: () => metric(/thumbd_jobs_total\{kind="resize",outcome="ok"\} (\d+)/), memoHits: () => metric(/thumbd_result_memo_total\{outcome="hit"\} (\d+)/) }
}

test('200 identical GETs of an uncached URL, most arriving after the first finished: one fetch, one job, all 200, hits counted', async (t) => {
  const { get, hits, jobs, memoHits } = await setup(t)
  const first = await Promise.all(Array.from({ length: 20 }, get))
  // The rest spread over the next ~200 ms, all after the first reply went out.
  const rest = await Promise.all(Array.from({ length: 180 }, async (_, i) => { await sleep(i); return get() }))
  const replies = [...first, ...rest]
  assert.deepEqual([...new Set(replies.map(r => r.status))], [200])
  assert.deepEqual([...new Set(replies.map(r => r.type))], ['image/webp'])
  assert.equal(new Set(replies.map(r => r.etag)).size, 1)
  assert.ok(replies.every(r => r.body.equals(replies[0]!.body)), 'the same bytes')
  assert.equal(hits.length, 1, `one fetch (memo hits: ${await memoHits()})`)
  assert.equal(await jobs(), 1, 'one job')
  assert.ok(await memoHits() >= 180, `the late ones are memo hits (${await memoHits()})`)
})

test('RESULT_CACHE_BYTES=0 turns the memo off; a reply older than RESULT_CACHE_SECONDS is not served', async (t) => {
  const off = await setup(t, { RESULT_CACHE_BYTES: '0' })
  await off.get()
  await off.get()
  assert.equal(off.hits.length, 2, 'off: every request after the first finished fetches again')
  const brief = await setup(t, { RESULT_CACHE_SECONDS: '1' })
  await brief.get()
  await brief.get()
  assert.equal(brief.hits.length, 1)
  await sleep(1100)
  await brief.get()
  assert.equal(brief.hits.length, 2, 'expired: fetched again')
})

test('the memo keeps at most its bytes, dropping the least recently used first, and nothing over an eighth of them', () => {
  let now = 0
  const memo = createResultMemo({ maxBytes: 16000, ttlMs: 1000, now: () => now })
  const reply = (size: number) => ({ etag: '"x"', headers: {}, body: Buffer.alloc(size) })
  for (const key of 'abcdefghijk') memo.set(key, reply(1000))
  assert.ok(memo.bytes <= 16000, String(memo.bytes))
  assert.equal(memo.get('a'), undefined, 'the oldest went first')
  assert.ok(memo.get('k') !== undefined)
  memo.set('big', reply(2000))
  assert.equal(memo.get('big'), undefined, 'over an eighth: not kept')
  now = 1000
  assert.equal(memo.get('k'), undefined, 'expired')
})
