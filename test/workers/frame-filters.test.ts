// The filter chain's steps, each on its string, and the colour path chosen from a stream's facts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bestOf, bound, frameFilters, shrink, squarePixels, to8bit, toSdr, turn, ZSCALE_INPUT } from '../../workers/video/frame-filters.ts'
import { bitDepth, colourPath, isHdr, parseStreamLine, probeFacts } from '../../workers/video/stream-colour.ts'
import { boundFor } from '../../workers/video/video.ts'

const sdr709 = colourPath({ width: 1920, height: 1080 })

test('square pixels: the SAR (clipped to 1/4..4) narrows or flattens the frame, never enlarges it', () => {
  assert.deepEqual(squarePixels(), { w: 'iw*min(1,clip(sar,0.25,4))', h: 'ih/max(1,clip(sar,0.25,4))' })
})

test('shrink: one scale to cover the box at the display size, never enlarging; pixels square after it', () => {
  const display = { w: 'DW', h: 'DH' }
  assert.equal(shrink(display), "scale=w='max(1,trunc(DW*1))':h='max(1,trunc(DH*1))':flags=area,setsar=1")
  assert.equal(shrink(display, { width: 640 }), "scale=w='max(1,trunc(DW*min(1,640/(DW))))':h='max(1,trunc(DH*min(1,640/(DW))))':flags=area,setsar=1")
  assert.match(shrink(display, { width: 640, height: 360 }), /min\(1,max\(640\/\(DW\),360\/\(DH\)\)\)/)
})

test('tone-map: PQ and HLG through linear light at BT.2408 reference white, mobius roll-off, BT.709; BT.2020 SDR converted; SDR untouched', () => {
  const pq = toSdr(colourPath({ width: 3840, height: 2160, transfer: 'smpte2084', primaries: 'bt2020', matrix: 'bt2020nc' }))!
  assert.equal(pq, 'format=pix_fmts=yuv444p16le|gbrp16le,zscale=min=2020_ncl:pin=2020:rin=limited:tin=smpte2084:t=linear:npl=203,format=gbrpf32le,zscale=p=709,tonemap=tonemap=mobius:param=0.7:peak=4.93:desat=0,zscale=t=709,format=gbrp')
  assert.match(toSdr(colourPath({ width: 1920, height: 1080, transfer: 'arib-std-b67', range: 'pc' }))!, /,zscale=min=2020_ncl:pin=2020:rin=full:tin=arib-std-b67:t=linear/)
  assert.equal(toSdr(colourPath({ width: 1920, height: 1080, transfer: 'bt2020-10', primaries: 'bt2020', matrix: 'bt2020nc' })), 'format=pix_fmts=yuv444p16le|gbrp16le,zscale=min=2020_ncl:pin=2020:rin=limited:tin=709:p=709:t=709,format=gbrp')
  assert.equal(toSdr(sdr709), undefined)
})

test('zscale is given frames without chroma subsampling, so an odd side (a shrunk portrait frame: 640x1137) passes', () => {
  for (const dynamic of ['pq', 'hlg', 'bt2020'] as const) {
    assert.ok(toSdr({ dynamic, matrix: 'bt2020', range: 'tv' })!.startsWith(`${ZSCALE_INPUT},zscale=`), dynamic)
  }
  // 4:4:4 at 16 bits holds any depth; RGB stays RGB (zscale reads it without a matrix).
  assert.equal(ZSCALE_INPUT, 'format=pix_fmts=yuv444p16le|gbrp16le')
})

test('to 8 bits: RGB or RGBA, YUV read with the matrix chosen (none after zscale, which made RGB)', () => {
  assert.equal(to8bit('bt601'), 'scale=in_color_matrix=bt601,format=pix_fmts=rgba|rgb24')
  assert.equal(to8bit(undefined), 'format=pix_fmts=rgba|rgb24')
})

test('composed in one order: square+shrink, best-of, tone-map, 8 bits', () => {
  const hlg = colourPath({ width: 3840, height: 2160, transfer: 'arib-std-b67', primaries: 'bt2020', matrix: 'bt2020nc' })
  const chain = frameFilters({ coverBox: { width: 640 }, bestOf: 20, bestOfSide: 640, colour: hlg })
  assert.equal(chain, [shrink(squarePixels(), { width: 640 }), bestOf(20, 640), toSdr(hlg), to8bit(undefined)].join(','))
  assert.equal(frameFilters({ bestOf: 0, colour: sdr709 }), `${shrink(squarePixels())},${to8bit('bt709')}`)
})

test('a turn left to the chain (-noautorotate) comes last, on the 8-bit frame; the shrink and the bound take the frame as stored', () => {
  const hlg = colourPath({ width: 3840, height: 2160, transfer: 'arib-std-b67', primaries: 'bt2020', matrix: 'bt2020nc' })
  const limit = { width: 328, height: 188, fit: 'crop' } as const
  // A phone's portrait video: stored 3840x2160, shown 2160x3840; 320 px wide as shown is 320 px tall as stored.
  assert.equal(frameFilters({ coverBox: { width: 320 }, bound: limit, bestOf: 0, colour: hlg, turned: 270 }),
    [shrink(squarePixels(), { height: 320 }), bound({ width: 188, height: 328, fit: 'crop' }), toSdr(hlg), to8bit(undefined), 'transpose=cclock'].join(','))
  assert.equal(frameFilters({ coverBox: { width: 320 }, bound: limit, bestOf: 0, colour: hlg, turned: 180 }),
    [shrink(squarePixels(), { width: 320 }), bound(limit), toSdr(hlg), to8bit(undefined), 'hflip,vflip'].join(','))
  // ffmpeg's autorotate: a quarter clockwise is transpose=clock; nothing for no turn (the chain is as before).
  assert.equal(turn(90), 'transpose=clock')
  assert.equal(frameFilters({ coverBox: { width: 320 }, bestOf: 0, colour: hlg, turned: 0 }), frameFilters({ coverBox: { width: 320 }, bestOf: 0, colour: hlg }))
})

test('the colour path: transfer decides HDR; tags decide the matrix; untagged SD is BT.601, HD BT.709', () => {
  assert.deepEqual(colourPath({ width: 720, height: 576 }), { dynamic: 'sdr', matrix: 'bt601', range: 'tv' })
  assert.deepEqual(colourPath({ width: 1280, height: 720 }), { dynamic: 'sdr', matrix: 'bt709', range: 'tv' })
  assert.equal(colourPath({ width: 1920, height: 1080, matrix: 'smpte170m' }).matrix, 'bt601')
  assert.equal(colourPath({ width: 640, height: 480, matrix: 'bt709' }).matrix, 'bt709')
  // Contradictory tags: PQ with BT.709 primaries and a BT.601 matrix is still PQ, read with the matrix it says.
  assert.deepEqual(colourPath({ width: 1920, height: 1080, transfer: 'smpte2084', primaries: 'bt709', matrix: 'bt470bg' }), { dynamic: 'pq', matrix: 'bt601', range: 'tv' })
  assert.deepEqual(colourPath({ width: 1920, height: 1080, transfer: 'arib-std-b67' }), { dynamic: 'hlg', matrix: 'bt2020', range: 'tv' })
  assert.equal(isHdr({ width: 1, height: 1, transfer: 'bt709' }), false)
})

test("the facts of a stream from ffmpeg's report line and from ffprobe", () => {
  assert.deepEqual(parseStreamLine('  Stream #0:0[0x1](und): Video: hevc (Main 10) (hvc1 / 0x31637668), yuv420p10le(tv, bt2020nc/bt2020/arib-std-b67, progressive), 3840x2160 [SAR 1:1 DAR 16:9], 25 fps'),
    { width: 3840, height: 2160, pixFmt: 'yuv420p10le', range: 'tv', matrix: 'bt2020nc', primaries: 'bt2020', transfer: 'arib-std-b67', sar: [1, 1] })
  assert.deepEqual(parseStreamLine('  Stream #0:0: Video: h264 (High), yuv420p(tv, bt709, progressive), 720x576, SAR 64:45 DAR 16:9, 25 fps'),
    { width: 720, height: 576, pixFmt: 'yuv420p', range: 'tv', matrix: 'bt709', primaries: 'bt709', transfer: 'bt709', sar: [64, 45] })
  assert.deepEqual(parseStreamLine('  Stream #0:0: Video: prores (4444) (ap4h / 0x68347061), yuva444p12le(tv, progressive), 320x240'), { width: 320, height: 240, pixFmt: 'yuva444p12le', range: 'tv' })
  assert.equal(parseStreamLine('  Stream #0:1: Audio: aac (LC), 48000 Hz, stereo'), undefined)
  assert.equal(parseStreamLine('    comment: Stream #0:0: Video: h264, yuv420p, 10x10'), undefined)
  assert.deepEqual(probeFacts({ width: 720, height: 576, pix_fmt: 'yuv420p10le', color_transfer: 'smpte2084', sample_aspect_ratio: '64:45' }),
    { width: 720, height: 576, pixFmt: 'yuv420p10le', transfer: 'smpte2084', sar: [64, 45] })
  assert.deepEqual([bitDepth('yuv420p'), bitDepth('yuv420p10le'), bitDepth('yuva444p12le'), bitDepth('rgb48le'), bitDepth('gray10le'), bitDepth('rgba64be')], [8, 10, 12, 16, 10, 16])
})

test('bound: right after the shrink, a frame past the probe\'s shape is cropped, stretched or fitted; one within it passes', () => {
  assert.equal(bound({ width: 1288, height: 12, fit: 'crop' }), "crop=w='min(iw,1288)':h='min(ih,12)':exact=1")
  assert.equal(bound({ width: 10, height: 20, fit: 'stretch' }), "scale=w='min(iw,10)':h='min(ih,20)':flags=area")
  assert.equal(bound({ width: 10, height: 20, fit: 'inside' }), "scale=w='min(iw,10)':h='min(ih,20)':force_original_aspect_ratio=decrease:flags=area")
  const chain = frameFilters({ coverBox: { width: 1280 }, bound: { width: 1288, height: 12, fit: 'crop' }, bestOf: 0, colour: sdr709 })
  assert.ok(chain.startsWith(`${shrink(squarePixels(), { width: 1280 })},crop=`), chain)
  // The prescale's size of a frame of the probe's shape, and 8 px: 640 px tiles of 4096x16 are 2 px tall.
  assert.deepEqual(boundFor({ width: 4096, height: 16 }, { width: 640 }, 'crop'), { width: 1288, height: 13, fit: 'crop' })
  assert.deepEqual(boundFor({ width: 320, height: 180 }, { width: 640, height: 640 }, 'inside'), { width: 328, height: 188, fit: 'inside' })
})
