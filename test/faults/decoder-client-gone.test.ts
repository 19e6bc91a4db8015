// IMAGE_DECODER=sandbox: a client that leaves stops its image's decode at once, not at JOB_TIMEOUT_MS. The decoder
// (native/image-decode, one process a request) is frozen as soon as it is seen, so that only a kill can end it; the
// client then leaves, and the process must be gone, the pool thread free for the next job and the upload's temp file
// deleted, all long before the deadline (two minutes here).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import sharp from 'sharp'
import { IMAGE_DECODE_FILE } from '../../workers/tools/sandbox.ts'
import { imageDecoders } from '../workers/tools/decoder-probe.ts'
import { build, leftoverTempFiles } from '../helper.ts'
import { gone, listen, upload, waitFor } from './helpers.ts'

/** A large noisy picture: long enough to decode that the test sees its decoder before it ends. */
async function noisy (format: 'jpeg' | 'png'): Promise<Buffer> {
  const picture = sharp({ create: { width: 3000, height: 3000, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
  return format === 'jpeg' ? await picture.jpeg({ quality: 95 }).toBuffer() : await picture.png({ compressionLevel: 1 }).toBuffer()
}

test('a client that leaves mid-decode stops its sandboxed decoder at once: the process is killed, the thread takes the next job, no temp file stays', { skip: !existsSync(IMAGE_DECODE_FILE) && 'native/image-decode not built' }, async (t) => {
  const app = await build(t, { POOL_THREADS: '1', JOB_TIMEOUT_MS: '120000', MAX_QUEUE_WAIT_MS: '60000', IMAGE_DECODER: 'sandbox' })
  const base = await listen(app)
  const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#336699' } }).png().toBuffer()
  assert.equal((await upload(base, 'thumbnail', small, '?width=100')).status, 200)
  for (const format of ['jpeg', 'png'] as const) {
    const client = new AbortController()
    const reply = upload(base, 'thumbnail', await noisy(format), '?width=100', client.signal).catch((err: Error) => err)
    let pids: number[] = []
    await waitFor(() => (pids = imageDecoders()).length > 0, 60_000, `${format}: its decoder to start`)
    assert.equal(pids.length, 1, `${format}: one decoder process`)
    // Frozen: it cannot end by itself now (a SIGTERM waits for a SIGCONT; the server's SIGKILL after its grace does not).
    process.kill(pids[0]!, 'SIGSTOP')
    const left = performance.now()
    client.abort()
    assert.equal(((await reply) as Error).name, 'AbortError')
    assert.ok(await gone(pids[0]!, 10_000), `${format}: the decoder is killed when its client leaves, not at the deadline`)
    t.diagnostic(`${format}: decoder gone ${(performance.now() - left).toFixed(0)} ms after the client left`)
    const next = await upload(base, 'thumbnail', small, '?width=100')
    assert.equal(next.status, 200, `${format}: the thread takes the next job`)
    await waitFor(() => leftoverTempFiles(app).length === 0, 5000, `${format}: its temp files to be deleted`)
  }
  assert.match(await (await fetch(`${base}/metrics`)).text(), /thumbd_jobs_total\{kind="thumbnail",outcome="cancelled"\} 2\n/)
})
