import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Piscina } from 'piscina'
import { createPairing, isSmallImage, SMALL_IMAGE_BYTES, type Seat } from '../../src/jobs/pairing.ts'
import { sniff } from '../../contract/sniff.ts'
import type { ThumbnailTask } from '../../contract/types.ts'
import { build } from '../helper.ts'
import { media, type MediaName } from '../media.ts'

type Balancer = ReturnType<typeof createPairing>['balancer']
type Worker = Parameters<Balancer>[1][number]
const worker = (id: number, currentUsage: number) => ({ id, currentUsage, terminating: false, destroyed: false }) as unknown as Worker
const taskOf = (seat: Seat) => ({ [Piscina.queueOptionsSymbol]: seat }) as unknown as Parameters<Balancer>[0]
const seat = (small: boolean): Seat => ({ small, sharers: 1 })

test('the balancer prefers an idle thread, then a new one, and pairs small images only with small images', () => {
  const pairing = createPairing(2)
  // Two threads, with the usage piscina would report after each placement.
  const usage = new Map([[1, 0], [2, 0]])
  const place = (job: Seat, workers = [1, 2]) => {
    const chosen = pairing.balancer(taskOf(job), workers.map(id => worker(id, usage.get(id)!)))
    if (chosen !== null) usage.set(chosen.id, usage.get(chosen.id)! + 1)
    return chosen?.id ?? null
  }
  const done = (job: Seat) => { pairing.leave(job); usage.set(job.thread!, usage.get(job.thread!)! - 1) }

  const small1 = seat(true)
  assert.equal(place(small1, [1]), 1)
  assert.equal(place(seat(true), [1]), null, 'while the pool can grow, a new thread rather than a shared one')
  const large = seat(false)
  assert.equal(place(large), 2, 'an idle thread first')
  const small2 = seat(true)
  assert.equal(place(small2), 1, 'a small image joins the small one, not the large one')
  assert.deepEqual([small1.sharers, small2.sharers, large.sharers], [2, 2, 1])
  assert.equal(place(seat(true)), null, 'two jobs per thread at most')
  done(small1)
  assert.equal(place(seat(false)), null, 'a large job never shares')
  done(large)
  assert.equal(place(seat(false)), 2)
  done(small2)
  assert.equal(place(seat(true)), 1)
})

test('only images up to SMALL_IMAGE_BYTES count as small', () => {
  const source = (kind: 'image' | 'video', size: number) => ({ kind: 'thumbnail', source: { media: { kind }, size } }) as unknown as ThumbnailTask
  assert.equal(isSmallImage(source('image', SMALL_IMAGE_BYTES)), true)
  assert.equal(isSmallImage(source('image', SMALL_IMAGE_BYTES + 1)), false)
  assert.equal(isSmallImage(source('video', 1000)), false)
})

test('in the real pool two small images share the one thread, a large one waits for it', async (t) => {
  const app = await build(t, { POOL_THREADS: '1' })
  const task = async (name: MediaName): Promise<ThumbnailTask> => {
    const bytes = new Uint8Array(await media(name))
    return { kind: 'thumbnail', source: { ref: { location: 'memory', bytes }, media: sniff(bytes)!, size: bytes.length }, image: { width: 64, fit: 'inside', format: 'jpeg', quality: 80, withoutEnlargement: true }, video: { best: false } }
  }
  const noisy = await task('jpeg-noisy')
  assert.ok(noisy.source.size > SMALL_IMAGE_BYTES)
  await app.jobs.run(await task('jpeg')) // the thread is up

  const cases: Array<[MediaName, number]> = [['jpeg', 0], ['jpeg-noisy', 1]]
  for (const [first, queued] of cases) {
    const tasks = [await task(first), await task('jpeg')]
    const runs = tasks.map(each => app.jobs.run(each))
    assert.equal(app.jobs.stats().queued, queued, `${first} then a small JPEG: ${queued} waiting`)
    const results = await Promise.all(runs)
    for (const { value } of results) assert.ok(value.data.length > 0 && value.width === 64)
  }
})
