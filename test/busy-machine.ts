// How many times slower than quiet this machine is now, for the tests whose evidence is a time bound ("refused
// within 5 s", before a decoder could have done the work). On a busy machine (other work on its 2 cores, the
// decoders niced behind it) such bounds ran out on cases that were refused as they should be; scaled by this
// factor they keep their meaning, and a quiet machine keeps them as written.
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { postMedia } from './helper.ts'

/** What a tiny PNG's thumbnail takes through inject() on a quiet 2-core machine (~10 ms), with a margin. */
const QUIET_GOOD_CASE_MS = 20
const factors = new WeakMap<FastifyInstance, Promise<number>>()

/** At least 1: the median of three tiny thumbnails through `app` (after one to warm it), over their quiet time. */
export function slowdown (app: FastifyInstance): Promise<number> {
  let factor = factors.get(app)
  if (factor === undefined) {
    factor = (async () => {
      const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#808080' } }).png().toBuffer()
      const times: number[] = []
      for (let i = 0; i < 4; i++) {
        const started = Date.now()
        assert.equal((await postMedia(app, 'thumbnail', png, 'image/png')).statusCode, 200)
        if (i > 0) times.push(Date.now() - started)
      }
      return Math.max(1, times.sort((a, b) => a - b)[1]! / QUIET_GOOD_CASE_MS)
    })()
    factors.set(app, factor)
  }
  return factor
}
