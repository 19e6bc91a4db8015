import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sniff } from '../../contract/sniff.ts'
import { media, type MediaName } from '../media.ts'

test('real media is recognised from its bytes, with the right demuxer for videos', async () => {
  const expected: Array<[MediaName, string, string | undefined]> = [
    ['jpeg', 'jpeg', undefined], ['png', 'png', undefined], ['webp', 'webp', undefined], ['gif', 'gif', undefined], ['avif', 'avif', undefined],
    ['mp4-h264', 'mp4', 'mov'], ['mp4-h265', 'mp4', 'mov'], ['mov', 'mov', 'mov'],
    ['webm-vp8', 'webm', 'matroska'], ['webm-av1', 'webm', 'matroska'], ['mkv', 'mkv', 'matroska'], ['avi', 'avi', 'avi']
  ]
  for (const [name, format, demuxer] of expected) {
    const found = sniff((await media(name)).subarray(0, 4096))
    assert.equal(found?.format, format, name)
    assert.equal(found?.kind === 'video' ? found.demuxer : undefined, demuxer, name)
  }
})

test('anything else is unknown', () => {
  for (const bytes of [
    '', 'hello', '<svg xmlns="http://www.w3.org/2000/svg"/>', '#EXTM3U\n#EXT-X-TARGETDURATION:1\n', 'ffconcat version 1.0\nfile /etc/passwd\n',
    'PK\u0003\u0004zip', '%PDF-1.7', 'RIFF\u0000\u0000\u0000\u0000WAVEfmt ', 'II*\u0000tiff', 'BM bitmap'
  ]) {
    assert.equal(sniff(Buffer.from(bytes, 'latin1')), undefined, JSON.stringify(bytes))
  }
})

test('ISO brands: HEIC is told apart from AVIF and MP4', () => {
  const ftyp = (major: string, ...compatible: string[]) => {
    const brands = [major, '\u0000\u0000\u0000\u0000', ...compatible].join('')
    const size = Buffer.alloc(4)
    size.writeUInt32BE(8 + brands.length)
    return Buffer.concat([size, Buffer.from(`ftyp${brands}`, 'latin1')])
  }
  assert.equal(sniff(ftyp('heic', 'mif1', 'heic'))?.format, 'heic')
  assert.equal(sniff(ftyp('mif1', 'mif1', 'avif'))?.format, 'avif')
  assert.equal(sniff(ftyp('avif', 'avif'))?.format, 'avif')
  assert.equal(sniff(ftyp('isom', 'isom', 'avc1'))?.format, 'mp4')
  assert.equal(sniff(ftyp('qt  ', 'qt  '))?.format, 'mov')
  assert.equal(sniff(ftyp('\u0000\u0001\u0002\u0003')), undefined)
})
