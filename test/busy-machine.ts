// How many times slower than quiet this machine is now, for the tests whose evidence is a time bound ("refused
// within 5 s", before a decoder could have done the work). On a busy machine (other work on its 2 cores, the
// decoders niced behind it) such bounds ran out on cases that were refused as they should be; scaled by this
// factor they keep their meaning, and a quiet machine keeps them as written (within a few per cent).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { postMedia } from './helper.ts'

/** What a tiny PNG's thumbnail takes through inject() on a quiet 2-core machine (~10 ms), with a margin. */
const QUIET_GOOD_CASE_MS = 20
/** The niceness of job work and its decoders (WORKER_NICENESS's default, which build() keeps). */
const JOB_NICENESS = 10
/** How long the niced busy loop runs: long enough for the scheduler to give it its weight's share, not a waker's. */
const SHARE_WINDOW_MS = 600
const factors = new WeakMap<FastifyInstance, Promise<number>>()

/** The share of a core (0-1) that niced work gets now: a busy loop at JOB_NICENESS, its CPU time over its wall time. */
async function nicedShare (): Promise<number> {
  const started = performance.now()
  const loop = spawn('nice', ['-n', String(JOB_NICENESS), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' })
  await once(loop, 'spawn')
  await new Promise(resolve => setTimeout(resolve, SHARE_WINDOW_MS))
  // utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks of 10 ms; the name (field 2) has no space here.
  const fields = readFileSync(`/proc/${loop.pid}/stat`, 'latin1').split(' ')
  const wallMs = performance.now() - started
  loop.kill('SIGKILL')
  await once(loop, 'exit')
  return (Number(fields[13]) + Number(fields[14])) * 10 / wallMs
}

/**
 * At least 1: the larger of two slowdowns. Short work (the median of three tiny thumbnails through `app`, after
 * one to warm it, over their quiet time), and long niced work (one core over what a niced busy loop gets of one):
 * a niced decoder running for seconds gets its weight's share beside other work (beside stress-ng --cpu 2 on 2
 * cores, ~10 % at nice 10), while a 10 ms thumbnail is scheduled as a waker and hardly slowed (it read ~1 where a
 * heif-decode refusal took 3x its quiet time).
 */
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
      const share = await nicedShare()
      return Math.max(1, times.sort((a, b) => a - b)[1]! / QUIET_GOOD_CASE_MS, 1 / Math.max(share, 0.01))
    })()
    factors.set(app, factor)
  }
  return factor
}
