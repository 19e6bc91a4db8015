// Seeded mutation smoke: a few hundred random corruptions of valid small media. Never a 5xx but 503,
// never a hang, the server alive at the end, nothing left behind.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AUTH, build, leftoverTempFiles } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { media, type MediaName } from '../media.ts'

const SEED = 0x7417b5
const MUTATIONS = 300
const CONCURRENCY = 4
const HANG_MS = 15_000

/** mulberry32: small, seedable, good enough to pick bytes. */
function prng (seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function mutate (source: Buffer, random: () => number): Buffer {
  const pick = (n: number) => Math.floor(random() * n)
  const b = Buffer.from(source)
  switch (pick(5)) {
    case 0: // flip a few bytes
      for (let i = 1 + pick(20); i > 0; i--) b[pick(b.length)] ^= 1 + pick(255)
      return b
    case 1: // truncate
      return b.subarray(0, pick(b.length))
    case 2: // zero a run
      return b.fill(0, pick(b.length), pick(b.length))
    case 3: { // insert random bytes
      const at = pick(b.length)
      return Buffer.concat([b.subarray(0, at), Buffer.from(Array.from({ length: 1 + pick(64) }, () => pick(256))), b.subarray(at)])
    }
    default: { // repeat a slice
      const at = pick(b.length)
      return Buffer.concat([b.subarray(0, at), b.subarray(pick(b.length), pick(b.length)), b.subarray(at)])
    }
  }
}

test(`${MUTATIONS} seeded mutations of valid media: no 5xx but 503, no hang, server alive`, async (t) => {
  const app = await build(t)
  const names: MediaName[] = ['jpeg', 'png', 'webp', 'gif', 'avif', 'tiny-mp4', 'tiny-webm']
  const sources = await Promise.all(names.map(n => media(n)))
  const random = prng(SEED)
  const statuses = new Map<number, number>()
  let next = 0
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (next < MUTATIONS) {
      const n = next++
      const bytes = mutate(sources[n % sources.length]!, random)
      const request = app.inject({ method: 'POST', url: `/api/${n % 3 === 2 ? 'hash' : 'thumbnail'}`, headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: bytes })
      const res = await Promise.race([request, new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`mutation ${n} hung`)), HANG_MS))])
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      assert.ok(res.statusCode < 500 || res.statusCode === 503, `mutation ${n} (${names[n % names.length]}): ${res.statusCode} ${res.body}`)
    }
  })
  await Promise.all(workers)
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
  assert.equal((await app.inject({ url: '/health' })).statusCode, 200)
  assert.deepEqual(leftoverTempFiles(app), [])
  assert.deepEqual(decoderChildren(), [])
})
