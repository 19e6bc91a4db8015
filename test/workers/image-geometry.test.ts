// imgproxy's sizing rules for GET URLs (workers/image/image-geometry.ts): the sizes imgproxy 4 gives, as the issue
// measured them against imgproxy itself, and its documented dpr, zoom and min-width rules.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { urlResize } from '../../workers/image/image-geometry.ts'
import type { ImageOptions, UrlGeometry } from '../../contract/types.ts'

/** The output size for a source of `src` under rs:type:w:h and the other geometry options. */
function size (src: [number, number], type: UrlGeometry['type'], width: number, height: number, more: Partial<UrlGeometry> = {}): [number, number] {
  const options: ImageOptions = {
    width: width || undefined,
    height: height || undefined,
    fit: 'inside',
    format: 'jpeg',
    quality: 80,
    withoutEnlargement: true,
    url: { type, enlarge: false, dpr: 1, zoom: [1, 1], ...more }
  }
  const resize = urlResize(src, options)
  if (resize === undefined) return src
  if (resize.fit === 'fill') return [resize.width!, resize.height!]
  return [resize.width!, resize.height!] // cover: exactly the box
}

test('rs:force never enlarges one side alone: both shrink by the same limit (imgproxy: 640x192, 640x256)', () => {
  assert.deepEqual(size([640, 400], 'force', 1000, 300), [640, 192])
  assert.deepEqual(size([640, 400], 'force', 1000, 0), [640, 256])
  assert.deepEqual(size([640, 400], 'force', 300, 300), [300, 300], 'a shrink is forced as asked')
  assert.deepEqual(size([640, 400], 'force', 1000, 300, { enlarge: true }), [1000, 300])
})

test('rs:fill-down on a small source crops to the box\'s aspect ratio (imgproxy: 400x400); fill returns it whole', () => {
  assert.deepEqual(size([640, 400], 'fill-down', 1000, 1000), [400, 400])
  assert.deepEqual(size([640, 400], 'fill-down', 1000, 500), [640, 320])
  assert.deepEqual(size([640, 400], 'fill', 1000, 1000), [640, 400])
  assert.deepEqual(size([640, 400], 'fill-down', 320, 320), [320, 320])
})

test('rs:auto: fill when the source and the box lean the same way, else fit', () => {
  assert.deepEqual(size([640, 400], 'auto', 300, 200), [300, 200])
  assert.deepEqual(size([400, 640], 'auto', 300, 200), [125, 200])
})

test('dpr multiplies the sizes but never enlarges unless asked; zoom and min sizes', () => {
  assert.deepEqual(size([1000, 500], 'fit', 300, 0, { dpr: 2 }), [600, 300])
  assert.deepEqual(size([1000, 500], 'fit', 800, 0, { dpr: 2 }), [1000, 500], 'capped at the source')
  assert.deepEqual(size([1000, 500], 'fit', 800, 0, { dpr: 2, enlarge: true }), [1600, 800])
  assert.deepEqual(size([1000, 1000], 'fill', 300, 200, { dpr: 2 }), [600, 400])
  assert.deepEqual(size([500, 500], 'fill', 300, 200, { dpr: 2 }), [500, 333], 'the box shrinks with the capped dpr, keeping its shape')
  assert.deepEqual(size([1000, 500], 'fit', 400, 0, { zoom: [0.5, 0.5] }), [200, 100])
  // imgproxy's docs: with width and min-height both set, the image is cropped to the width (and likewise).
  assert.deepEqual(size([1000, 500], 'fit', 100, 0, { minHeight: 100 }), [100, 100])
  assert.deepEqual(size([1000, 500], 'fit', 0, 50, { minWidth: 400 }), [400, 50])
  assert.deepEqual(size([1000, 500], 'fit', 300, 0, { minWidth: 200 }), [300, 150], 'already wide enough')
  assert.deepEqual(size([1000, 500], 'fit', 0, 0), [1000, 500])
})
