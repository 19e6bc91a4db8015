// Background steps (an asynchronous job's, src/batch/capacity.ts): outside admission, one decoder thread.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decoderThreads } from '../../src/jobs/settings.ts'
import { sniff } from '../../contract/sniff.ts'
import type { ResizeTask } from '../../contract/types.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'

test('a background step gets one decoder thread even on an idle pool; a request alone gets them all', () => {
  assert.equal(decoderThreads(4, 0, false), 4)
  assert.equal(decoderThreads(4, 1, false), 1)
  assert.equal(decoderThreads(4, 0, true), 1)
})

test('a background step reserves nothing in admission, so no request is refused or wait-estimated for it', async (t) => {
  // A bound of 0: any reserved work refuses the next request, which makes a background reservation visible.
  const app = await build(t, { POOL_THREADS: '2', MAX_QUEUE_WAIT_MS: '0' })
  const bytes = new Uint8Array(await media('jpeg-noisy'))
  const task = (): ResizeTask => ({ kind: 'resize', source: { ref: { location: 'memory', bytes: new Uint8Array(bytes) }, media: sniff(bytes)!, size: bytes.length }, image: { width: 320, fit: 'inside', format: 'jpeg', quality: 80, withoutEnlargement: true } })

  const background = app.jobs.run(task(), { background: true })
  assert.equal(app.admission.expectedWaitMs(), 0, 'the running background step is no queue wait for requests')
  assert.equal(app.jobs.stats().background, 1)
  const request = await app.jobs.run(task())
  assert.ok(request.value.data.length > 0, 'a request beside the background step is admitted and runs')
  assert.ok((await background).value.data.length > 0)
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(app.jobs.stats().background, 0)
})
