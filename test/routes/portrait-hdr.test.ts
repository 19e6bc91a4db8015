// Issue 44's cases on its video (a phone's portrait HLG, stored 1280x720 with a 90° display rotation): the
// default thumbnail width, a 200x200 box and a preview with its defaults were 422s, because the frame shrunk
// to cover twice the output came out with an odd side (640x1137) and zscale refuses odd 4:2:0. The sizes that
// worked then must still come out as they did.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'
import { phoneHlg } from '../video-matrix.ts'

test("a phone's portrait HLG video: 320 px wide by default, 200x200, the default preview, and the sizes that always worked", { timeout: 240_000 }, async (t) => {
  const app = await build(t)
  const video = await readFile(await phoneHlg())
  const info = (await postMedia(app, 'info', video, 'video/quicktime')).json()
  assert.deepEqual([info.width, info.height, info.rotation, info.bitDepth, info.hdr], [720, 1280, 270, 10, true])

  for (const [route, query, size, pages] of [
    ['thumbnail', '', [320, 569], 1],
    ['thumbnail', '?width=320', [320, 569], 1],
    ['thumbnail', '?width=200&height=200', [200, 200], 1],
    ['preview', '', [320, 568], 8],
    ['thumbnail', '?width=360', [360, 640], 1],
    ['thumbnail', '?width=300', [300, 533], 1],
    ['thumbnail', '?height=320', [180, 320], 1]
  ] as const) {
    const res = await postMedia(app, route, video, 'video/quicktime', query)
    assert.equal(res.statusCode, 200, `${route}${query}: ${res.body}`)
    const meta = await sharp(res.rawPayload).metadata()
    assert.deepEqual([meta.width, meta.pageHeight ?? meta.height, meta.pages ?? 1], [...size, pages], `${route}${query}`)
  }
  const board = await postMedia(app, 'storyboard', video, 'video/quicktime', '?count=6&columns=3')
  assert.equal(board.statusCode, 200, board.body)
  assert.deepEqual([board.json().tileWidth, board.json().tileHeight, board.json().width, board.json().height], [160, 284, 480, 568])
  assert.deepEqual(leftoverTempFiles(app), [])
})
