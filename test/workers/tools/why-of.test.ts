// What a tool's refusal is logged with: the lines of its stderr that say why, not the input report before them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { whyOf } from '../../../workers/tools/run-tool.ts'

const REPORT = [
  "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'file:/tmp/thumbd-1/abc':",
  '  Metadata:',
  '    major_brand     : qt  ',
  '  Duration: 00:00:02.00, start: 0.000000, bitrate: 2063 kb/s',
  '  Stream #0:0[0x1]: Video: hevc (Main 10) (hvc1 / 0x31637668), yuv420p10le(tv, bt2020nc/bt2020/arib-std-b67, progressive), 1280x720',
  '    Side data:',
  '      displaymatrix: rotation of 90.00 degrees',
  'Stream mapping:',
  '  Stream #0:0 -> #0:0 (hevc (native) -> pam (native))'
]

test("whyOf: ffmpeg's refusal without its input report, each line once, without the addresses in its prefixes", () => {
  const stderr = [...REPORT,
    '[Parsed_zscale_2 @ 0x55ce394aa640] code 1027: image dimensions must be divisible by subsampling factor',
    '    Last message repeated 5 times',
    'Error while filtering: Generic error in an external library',
    '[Parsed_zscale_2 @ 0x55ce394aa640] code 1027: image dimensions must be divisible by subsampling factor',
    'Conversion failed!', ''].join('\n')
  assert.equal(whyOf(stderr), [
    '[Parsed_zscale_2] code 1027: image dimensions must be divisible by subsampling factor',
    'Error while filtering: Generic error in an external library',
    'Conversion failed!'
  ].join('\n'))
  // A tail of 2 KB starts inside a line: that piece is dropped.
  const tail = ('~'.repeat(3000) + '\n' + stderr).slice(-2048)
  assert.ok(tail.length === 2048 && !whyOf(tail).includes('~'), whyOf(tail))
  // Nothing but the report: given as it was, rather than nothing.
  assert.equal(whyOf(REPORT.join('\n')), REPORT.join('\n').trim())
})
