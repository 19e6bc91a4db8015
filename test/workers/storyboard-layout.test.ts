// The sprite's layout from the probe: the bounds that refuse a sheet too large, and the requests they must let through.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { spriteLayout } from '../../workers/video/storyboard-layout.ts'

test('the default 60 tiles at the widest 640 px fit 16:9, 4:3, 1:1 and 4:5 video; 9:16 at 640 px is refused (413)', () => {
  for (const [w, h, rows] of [[1920, 1080, 360], [1440, 1080, 480], [1080, 1080, 640], [1080, 1350, 800]] as const) {
    const layout = spriteLayout({ width: w, height: h }, 60, { columns: 10, tileWidth: 640, format: 'jpeg' })
    assert.deepEqual([layout.width, layout.height], [6400, 6 * rows], `${w}x${h}`)
  }
  assert.throws(() => spriteLayout({ width: 1080, height: 1920 }, 60, { columns: 10, tileWidth: 640, format: 'jpeg' }), { code: 'PAYLOAD_TOO_LARGE' })
})
