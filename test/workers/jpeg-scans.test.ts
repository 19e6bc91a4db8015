// workers/image/jpeg-scans.ts counts the scans libjpeg would read: every SOS after a segment or entropy-coded data, none
// hidden in an APP segment's payload, the same whether the JPEG is in memory or read from its file in chunks.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { MAX_JPEG_SCANS } from '../../contract/limits.ts'
import { checkScans, countScans, countScansInFile } from '../../workers/image/jpeg-scans.ts'
import { haveJpegtran, plainGrey, scanBomb } from './scan-bombs.ts'

/** The JPEG with an APP15 segment after SOI whose payload (65533 bytes) is full of FF DA pairs. */
function withDecoy (jpeg: Buffer, segments: number): Buffer {
  const decoy = Buffer.alloc(65535 + 2)
  decoy.writeUInt16BE(0xffef, 0)
  decoy.writeUInt16BE(65535, 2)
  for (let i = 4; i + 1 < decoy.length; i += 2) decoy.writeUInt16BE(0xffda, i)
  return Buffer.concat([jpeg.subarray(0, 2), ...Array.from({ length: segments }, () => decoy), jpeg.subarray(2)])
}

test('scans are counted as libjpeg reads them, in memory and from a file in chunks', { skip: !haveJpegtran && 'no jpegtran' }, async (t) => {
  const plain = await plainGrey(512)
  const dir = mkdtempSync(join(tmpdir(), 'jpeg-scans-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  assert.equal(countScans(plain), 1)
  for (const n of [10, MAX_JPEG_SCANS, MAX_JPEG_SCANS + 1, 595]) {
    const bomb = scanBomb(plain, n)
    assert.equal(countScans(bomb, 1000), n)
    // 20 decoys of 64 KiB: the segments and the FF DA pairs cross the 1 MiB chunks of the file read.
    const hidden = withDecoy(bomb, 20)
    assert.equal(countScans(hidden, 1000), n, 'no SOS inside an APP segment')
    writeFileSync(join(dir, 'bomb.jpg'), hidden)
    assert.equal(countScansInFile(join(dir, 'bomb.jpg'), 1000), n, 'from the file')
    if (n > MAX_JPEG_SCANS) {
      assert.throws(() => checkScans({ bytes: bomb }), (err: Error & { code?: string }) => err.code === 'PAYLOAD_TOO_LARGE')
      assert.throws(() => checkScans({ path: join(dir, 'bomb.jpg') }), (err: Error & { code?: string }) => err.code === 'PAYLOAD_TOO_LARGE')
    } else {
      checkScans({ bytes: bomb })
      checkScans({ path: join(dir, 'bomb.jpg') })
    }
  }
  // Entropy-coded data with stuffed bytes and restart markers, and fill bytes before a marker.
  const stuffed = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 4, 1, 2, 0x12, 0xff, 0x00, 0xff, 0xd3, 0x34, 0xff, 0xff, 0xda, 0, 2, 0xff, 0xda, 0, 2, 0xff, 0xd9, 0xff, 0xda, 0, 2])
  assert.equal(countScans(stuffed), 3, 'three scans before EOI, none after it')
  assert.equal(countScans(Buffer.from('\x89PNG\r\n\x1a\n\xff\xda\0\x02', 'latin1')), 0, 'not a JPEG')
})
