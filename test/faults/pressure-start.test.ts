// The event-loop guard (PRESSURE_MAX_EVENT_LOOP_DELAY_MS) and a server's start: a stall before the server could
// take requests (its start-up, stretched by a busy machine) sheds nothing after it; a stall once it is up does.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, postMedia } from '../helper.ts'
import { listen, sleep } from './helpers.ts'

/** Blocks the event loop for `ms`, in turns of 1.1 s: every 1 s sample of the guard in that time reads over 1 s. */
async function stall (ms: number) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const turn = Date.now() + 1100
    while (Date.now() < turn) { /* the loop gets no turn */ }
    // One turn of timers: the guard's histogram and its sample.
    await sleep(0)
  }
}

test('the event-loop guard sheds for a stall once the server is up, not for its own start-up\'s stall', async (t) => {
  const app = await build(t, { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '1000' })
  // Between ready and listening, as a start-up on a busy machine stalls (1-2 s seen beside stress-ng).
  await stall(3300)
  await listen(app)
  const first = await postMedia(app, 'hash', Buffer.from('x'))
  assert.equal(first.statusCode, 200, `the first request after start: ${first.body}`)

  // Up for two sample intervals: a stall now is load, and the guard sheds for it.
  await sleep(2100)
  await stall(3300)
  const res = await postMedia(app, 'hash', Buffer.from('x'))
  assert.equal(res.statusCode, 503, res.body)
  assert.equal(res.json().code, 'THUMBD_OVERLOADED')
})
