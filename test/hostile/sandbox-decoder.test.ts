// The hostile corpus's image cases with IMAGE_DECODER=sandbox: each answers the status and code it gets with
// the default in-process decode (hostile.test.ts holds those), now that native/image-decode and heif-decode parse
// the bytes; and /api/info and /api/hash give the very same answer as in-process. Raw bodies only: a URL source
// reaches the same decoder through the same file.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { sniff } from '../../contract/sniff.ts'
import { AUTH, build, leftoverTempFiles } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { hostileCorpus, makeSentinel } from './corpus.ts'

test('every image case of the hostile corpus answers as in-process with IMAGE_DECODER=sandbox', async (t) => {
  const app = await build(t, { IMAGE_DECODER: 'sandbox' })
  if (!app.mediaTools.imageDecodeStills) return t.skip('native/image-decode not built with its still decoders')
  const corpus = (await hostileCorpus(await makeSentinel())).filter(c => sniff(c.bytes)?.kind === 'image')
  assert.ok(corpus.length >= 15, `${corpus.length} image cases`)
  // Every case that differs, named at once.
  const differ: string[] = []
  for (const c of corpus) {
    const query = c.options === undefined ? '' : `?${new URLSearchParams(c.options)}`
    const res = await app.inject({ method: 'POST', url: `/api/thumbnail${query}`, headers: { ...AUTH, 'content-type': c.contentType }, payload: c.bytes })
    const got = res.statusCode === 200 ? 'ok' : `${res.statusCode} ${res.json().code}`
    const expected = c.expect === 'ok' ? 'ok' : `${c.expect.status} ${c.expect.code}`
    if (got !== expected) differ.push(`${c.name}: ${got}, in-process ${expected} (${res.statusCode === 200 ? '' : res.json().message})`)
  }
  assert.deepEqual(differ, [])
  assert.deepEqual(leftoverTempFiles(app), [])
  assert.deepEqual(decoderChildren(), [])
})

test('/api/info and /api/hash answer every image case of the hostile corpus as in-process with IMAGE_DECODER=sandbox', async (t) => {
  const sandboxed = await build(t, { IMAGE_DECODER: 'sandbox' })
  if (!sandboxed.mediaTools.imageDecodeStills) return t.skip('native/image-decode not built with its still decoders')
  const inProcess = await build(t)
  const corpus = (await hostileCorpus(await makeSentinel())).filter(c => sniff(c.bytes)?.kind === 'image')
  const differ: string[] = []
  for (const c of corpus) {
    for (const route of ['info', 'hash']) {
      const answer = async (app: typeof inProcess) => {
        const res = await app.inject({ method: 'POST', url: `/api/${route}`, headers: { ...AUTH, 'content-type': c.contentType }, payload: c.bytes })
        // A reply by its digest: the very same body, without printing it.
        return res.statusCode === 200 ? `ok ${createHash('sha256').update(res.rawPayload).digest('hex').slice(0, 16)}` : `${res.statusCode} ${res.json().code}`
      }
      const [expected, got] = await Promise.all([answer(inProcess), answer(sandboxed)])
      if (got !== expected) differ.push(`${c.name} /api/${route}: ${got}, in-process ${expected}`)
    }
  }
  assert.deepEqual(differ, [])
  assert.deepEqual(leftoverTempFiles(sandboxed), [])
  assert.deepEqual(decoderChildren(), [])
})
