// Every colour class x every display rotation x output sizes of odd and even sides x every fit x the routes
// that take a video frame (issue 44): each answers the size it should, worked out from the size as shown. A
// portrait HDR frame shrunk to an odd side was refused by zscale (422) at the default thumbnail width.
//
// The design: not the full product (20 clips x 36 asks = 720 requests), but every cell of every pair of
// factors. Each ask (a route with its size and fit) runs on all five classes, the class in position c taking
// rotation (c + j) mod 4 for the j-th ask: so every (class, ask) and every (rotation, ask) cell is run, and
// (class, rotation), (class, route) and (rotation, route) as well, since every route has four asks or more
// in a row but the storyboard (three: still each rotation with each class over its fifteen requests).
// 36 asks x 5 = 180 requests, and /api/info of the 20 clips.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import sharp from 'sharp'
import { startOrigin } from '../../load/range-origin.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { AUTH, build, leftoverTempFiles } from '../helper.ts'
import { CLASS_NAMES, ROTATIONS, imageSize, matrixClip, previewSize, shown, tileSize, type ColourClass, type Rotation } from '../video-matrix.ts'

const KEY = Buffer.alloc(32, 7)
const SALT = Buffer.alloc(16, 9)
type Shown = ReturnType<typeof shown>
type Ask = { route: 'thumbnail' | 'preview' | 'storyboard', query: string, expect: (d: Shown) => number[] } | { route: 'get', path: string, expect: (d: Shown) => number[] }

const FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const
const BOXES = [[100, 100], [167, 101]] as const
const ASKS: Ask[] = [
  // Thumbnails: the default (320 wide), widths and heights of odd and even sides, two boxes in every fit.
  { route: 'thumbnail', query: '', expect: d => imageSize(d) },
  ...[160, 161, 167].map(w => ({ route: 'thumbnail' as const, query: `width=${w}`, expect: (d: Shown) => imageSize(d, w) })),
  ...[160, 161].map(h => ({ route: 'thumbnail' as const, query: `height=${h}`, expect: (d: Shown) => imageSize(d, undefined, h) })),
  ...BOXES.flatMap(([w, h]) => FITS.map(fit => ({ route: 'thumbnail' as const, query: `width=${w}&height=${h}&fit=${fit}`, expect: (d: Shown) => imageSize(d, w, h, fit) }))),
  // Previews of two frames: a width, a height, a box in each of the three fits, another box.
  { route: 'preview', query: 'frames=2&width=161', expect: d => previewSize(d, 161) },
  { route: 'preview', query: 'frames=2&height=161', expect: d => previewSize(d, undefined, 161) },
  ...(['inside', 'cover', 'contain'] as const).map(fit => ({ route: 'preview' as const, query: `frames=2&width=100&height=100&fit=${fit}`, expect: (d: Shown) => previewSize(d, 100, 100, fit) })),
  { route: 'preview', query: 'frames=2&width=167&height=101&fit=cover', expect: d => previewSize(d, 167, 101, 'cover') },
  // Storyboards of two tiles in a row: the sprite is two tiles wide.
  ...[160, 161, 167].map(w => ({ route: 'storyboard' as const, query: `count=2&columns=2&width=${w}`, expect: (d: Shown) => { const [tw, th] = tileSize(d, w); return [2 * tw, th] } })),
  // GET URLs: imgproxy's resizing types (fit: inside, fill: cover, force, fill-down, auto), vta and vtt.
  { route: 'get', path: 'rs:fit:161:0', expect: d => imageSize(d, 161) },
  { route: 'get', path: 'rs:fit:0:161', expect: d => imageSize(d, undefined, 161) },
  { route: 'get', path: 'rs:fit:167:101', expect: d => imageSize(d, 167, 101, 'inside') },
  { route: 'get', path: 'rs:fill:100:100', expect: () => [100, 100] },
  { route: 'get', path: 'rs:force:167:101', expect: () => [167, 101] },
  { route: 'get', path: 'rs:fill-down:100:100', expect: () => [100, 100] },
  // auto: fill when the picture leans the way the box does (landscape), else fit.
  { route: 'get', path: 'rs:auto:167:101', expect: d => imageSize(d, 167, 101, d.width >= d.height ? 'cover' : 'inside') },
  { route: 'get', path: 'vta:-1:100:2:161:0', expect: d => previewSize(d, 161) },
  { route: 'get', path: 'vta:-1:100:2:100:100:0:0:1', expect: () => [100, 100] },
  { route: 'get', path: 'vta:-1:100:2:167:101:1', expect: () => [167, 101] },
  { route: 'get', path: 'vtt:0:2:1:167:0', expect: d => { const [tw, th] = tileSize(d, 167); return [2 * tw, th] } }
]

/** The width and height of an answer's picture (a page of an animation; a storyboard's sprite). */
async function sizeOf (body: Buffer): Promise<number[]> {
  const meta = await sharp(body).metadata()
  return [meta.width, meta.pageHeight ?? meta.height]
}

/** Runs `jobs` `width` at a time (the pool has two threads; a third keeps one waiting, not idle). */
async function atMost<T> (width: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = []
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    for (let i = next++; i < jobs.length; i = next++) results[i] = await jobs[i]!()
  }))
  return results
}

test('every colour class x rotation x odd and even size x fit gives its size, through thumbnail, preview, storyboard and GET URLs', { timeout: 600_000 }, async (t) => {
  const clips = new Map<string, Buffer>()
  for (const colour of CLASS_NAMES) for (const rotation of ROTATIONS) clips.set(`${colour}-${rotation}.mp4`, await readFile(await matrixClip(colour, rotation)))
  const origin = await startOrigin(Object.fromEntries(clips))
  t.after(origin.close)
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url('') })
  const failures: string[] = []

  // What the expectations rest on: each clip is shown at its rotated size, in its class.
  await atMost(3, [...clips].map(([name, clip]) => async () => {
    const info = (await app.inject({ method: 'POST', url: '/api/info', headers: { ...AUTH, 'content-type': 'video/mp4' }, payload: clip })).json()
    const [colour, rotation] = [name.replace(/-\d+\.mp4$/, '') as ColourClass, Number(/-(\d+)\.mp4$/.exec(name)![1]) as Rotation]
    const d = shown(rotation)
    const facts = [info.width, info.height, info.rotation, info.bitDepth, info.hdr]
    const wanted = [d.width, d.height, (360 - rotation) % 360, colour === 'sdr-8bit' ? 8 : 10, colour === 'hlg' || colour === 'pq']
    if (JSON.stringify(facts) !== JSON.stringify(wanted)) failures.push(`${name} info: ${JSON.stringify(facts)}, not ${JSON.stringify(wanted)}`)
  }))

  const runs = ASKS.flatMap((ask, j) => CLASS_NAMES.map((colour, c) => ({ ask, colour, rotation: ROTATIONS[(c + j) % ROTATIONS.length]! })))
  await atMost(3, runs.map(({ ask, colour, rotation }) => async () => {
    const name = `${colour}-${rotation}.mp4`
    const res = ask.route === 'get'
      ? await app.inject({ url: signedUrlPath(`/${ask.path}/plain/${origin.url(name)}`, KEY, SALT) })
      : await app.inject({ method: 'POST', url: `/api/${ask.route}?${ask.query}`, headers: { ...AUTH, 'content-type': 'video/mp4' }, payload: clips.get(name)! })
    const what = `${name} ${ask.route} ${ask.route === 'get' ? ask.path : ask.query}`
    if (res.statusCode !== 200) return failures.push(`${what}: ${res.statusCode} ${res.body}`)
    const wanted = ask.expect(shown(rotation))
    const got = ask.route === 'storyboard' ? [res.json().width, res.json().height] : await sizeOf(res.rawPayload)
    if (ask.route === 'storyboard') got.push(...await sizeOf(Buffer.from(res.json().sprite, 'base64')))
    const expected = ask.route === 'storyboard' ? [...wanted, ...wanted] : wanted
    if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${what}: ${got.join('x')}, not ${expected.join('x')}`)
  }))
  assert.equal(runs.length, 180)
  assert.deepEqual(failures, [])
  // A temp file goes when its request has ended, which the reply may beat by a moment: the last requests' are
  // waited for (a file that stays is still a failure).
  for (let wait = 0; wait < 50 && leftoverTempFiles(app).length > 0; wait++) await new Promise(resolve => setTimeout(resolve, 100))
  assert.deepEqual(leftoverTempFiles(app), [])
})
