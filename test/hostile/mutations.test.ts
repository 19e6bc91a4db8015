// Seeded mutation smoke: a few hundred random corruptions of valid small media. Never a 5xx but 503,
// never a hang, the server alive at the end, nothing left behind. And the mutations must have reached the
// decoders, images and videos alike: some still decode (200), some are refused by the decoder (422). A run
// that sniffing or shedding stopped short would prove nothing about sharp or ffmpeg. Animations go through the
// animated path (format webp or gif) and videos through previews too.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AUTH, build, leftoverTempFiles } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { media, type MediaName } from '../media.ts'
import { corpus, type CorpusName } from '../video-corpus.ts'
import { mutate, prng } from '../../load/mutate.ts'

const SEED = 0x7417b5
const MUTATIONS = 300
const CONCURRENCY = 4
/**
 * The job deadline (the default) and the admission bound, as the server is built below. The bound is long: on a
 * busy machine each niced job takes seconds, and a 5 s bound would shed past MAX_SHED, standing in for the decoders.
 */
const JOB_TIMEOUT_MS = 30_000
const MAX_QUEUE_WAIT_MS = 60_000
/**
 * A hang: no answer past the longest the server may take, its queue wait and its job deadline (then 504), with
 * a margin for a busy machine, where jobs run niced behind other work. A shorter bound measured the machine.
 */
const HANG_MS = MAX_QUEUE_WAIT_MS + JOB_TIMEOUT_MS + 20_000
/** Of each kind (image, video), at least this many decoded and this many refused by the decoder. */
const REACHED = 10
/** Shedding (503) may take a few under the file's own load of 4 at once, not hide the run. */
const MAX_SHED = MUTATIONS / 20

/** Read by ffmpeg: videos of every container, and audio files (their cover art). */
const VIDEOS = new Set<MediaName | CorpusName>(['tiny-mp4', 'tiny-webm', 'ts', 'm2ts', 'vob', 'ogv', 'wmv', 'flv', 'mp3', 'flac'])

type Outcome = 'decoded' | 'refused by the decoder' | 'other'

/** What became of a mutation: /api/hash answers 200 either way, with the perceptual hash only for what decoded. */
function outcome (route: string, res: { statusCode: number, json (): { type: unknown, perceptual: unknown } }): Outcome {
  if (route !== 'hash') return res.statusCode === 200 ? 'decoded' : res.statusCode === 422 ? 'refused by the decoder' : 'other'
  if (res.statusCode !== 200) return 'other'
  const { type, perceptual } = res.json()
  return perceptual !== null ? 'decoded' : type !== null ? 'refused by the decoder' : 'other'
}

test(`${MUTATIONS} seeded mutations of valid media: no 5xx but 503, no hang, server alive, decoders reached`, { timeout: 1_200_000 }, async (t) => {
  // The event-loop guard is off: on a busy machine it would shed past MAX_SHED and stand in for the decoders.
  const app = await build(t, { JOB_TIMEOUT_MS: String(JOB_TIMEOUT_MS), MAX_QUEUE_WAIT_MS: String(MAX_QUEUE_WAIT_MS), PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' })
  const images: MediaName[] = ['jpeg', 'png', 'webp', 'gif', 'avif', 'webp-anim', 'tiny-mp4', 'tiny-webm']
  const containers: CorpusName[] = ['ts', 'm2ts', 'vob', 'ogv', 'wmv', 'flv', 'mp3', 'flac']
  const names = [...images, ...containers]
  const sources = [...await Promise.all(images.map(n => media(n))), ...await Promise.all(containers.map(n => corpus(n)))]
  const random = prng(SEED)
  const replies: Array<{ kind: 'image' | 'video', status: number, outcome: Outcome }> = []
  let next = 0
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (next < MUTATIONS) {
      const n = next++
      const bytes = mutate(sources[n % sources.length]!, random)
      const video = VIDEOS.has(names[n % names.length]!)
      const route = n % 3 === 2 ? 'hash' : video && n % 3 === 1 ? 'preview' : 'thumbnail'
      // Every other image thumbnail keeps its animation (WebP, then GIF), the others take the still path (JPEG).
      const query = route === 'preview' ? '?frames=3&width=64' : route === 'thumbnail' && !video ? ['', '?format=webp', '', '?format=gif'][n % 4] : ''
      const request = app.inject({ method: 'POST', url: `/api/${route}${query}`, headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: bytes })
      const res = await Promise.race([request, new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`mutation ${n} hung`)), HANG_MS))])
      replies.push({ kind: video ? 'video' : 'image', status: res.statusCode, outcome: outcome(route, res) })
      assert.ok(res.statusCode < 500 || res.statusCode === 503, `mutation ${n} (${names[n % names.length]}): ${res.statusCode} ${res.body}`)
    }
  })
  await Promise.all(workers)
  const tally = Object.groupBy(replies, r => `${r.kind} ${r.status} ${r.outcome}`)
  t.diagnostic(`statuses: ${Object.entries(tally).map(([k, v]) => `${k}: ${v!.length}`).join(', ')}`)
  const count = (kind: string, what: Outcome) => replies.filter(r => r.kind === kind && r.outcome === what).length
  for (const kind of ['image', 'video']) {
    assert.ok(count(kind, 'decoded') >= REACHED, `some ${kind} mutations still decoded`)
    assert.ok(count(kind, 'refused by the decoder') >= REACHED, `some ${kind} mutations were refused by the decoder, not before it`)
  }
  assert.ok(replies.filter(r => r.status === 503).length <= MAX_SHED, 'shedding did not stand in for the decoders')
  assert.equal((await app.inject({ url: '/health' })).statusCode, 200)
  assert.deepEqual(leftoverTempFiles(app), [])
  assert.deepEqual(decoderChildren(), [])
})
