import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sniff } from '../../contract/sniff.ts'
import { media, type MediaName } from '../media.ts'
import { corpus, type CorpusName } from '../video-corpus.ts'

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

test('one row per container: MPEG-TS (188 and 192-byte packets), MPEG-PS, Ogg (Theora or audio), ASF, FLV, and audio files', async () => {
  const expected: Array<[CorpusName, string, string, string]> = [
    ['ts', 'video', 'ts', 'mpegts'], ['m2ts', 'video', 'm2ts', 'mpegts'], ['vob', 'video', 'mpeg', 'mpeg'], ['ogv', 'video', 'ogv', 'ogg'],
    ['wmv', 'video', 'asf', 'asf'], ['flv', 'video', 'flv', 'flv'],
    ['mp3', 'audio', 'mp3', 'mp3'], ['mp3-bare', 'audio', 'mp3', 'mp3'], ['m4a', 'audio', 'm4a', 'mov'], ['flac', 'audio', 'flac', 'flac']
  ]
  for (const [name, kind, format, demuxer] of expected) {
    const found = sniff((await corpus(name)).subarray(0, 4096))
    assert.deepEqual([found?.kind, found?.format, found !== undefined && 'demuxer' in found ? found.demuxer : undefined], [kind, format, demuxer], name)
  }
  // A VP9 track with alpha in WebM is read by libvpx-vp9 (ffmpeg's own vp9 decoder drops the alpha); without, not.
  assert.equal((sniff((await corpus('vp9-alpha')).subarray(0, 4096)) as { decoder?: string }).decoder, 'libvpx-vp9')
  assert.equal((sniff((await corpus('vp9-10bit')).subarray(0, 4096)) as { decoder?: string }).decoder, undefined)
})

test('container magic must hold where it says: TS sync bytes in every packet the head holds, Ogg with a known codec, MP3 frames with their header', () => {
  const ts = (packets: number, size = 188, offset = 0) => {
    const b = Buffer.alloc(packets * size)
    for (let i = 0; i < packets; i++) b[offset + i * size] = 0x47
    return b
  }
  assert.equal(sniff(ts(3))?.format, 'ts')
  assert.equal(sniff(ts(3, 192, 4))?.format, 'm2ts')
  assert.equal(sniff(ts(1)), undefined, 'one packet proves nothing')
  const broken = ts(8)
  broken[188 * 5] = 0
  assert.equal(sniff(broken), undefined, 'a packet without its sync byte')
  assert.equal(sniff(Buffer.from('OggS\u0000\u0002 some other codec', 'latin1')), undefined)
  assert.equal(sniff(Buffer.from([0xff, 0xfb, 0x90, 0x44, ...Array(60).fill(0)])), undefined, 'frame sync alone')
  assert.equal(sniff(Buffer.from('#EXTM3U\n#EXT-X-TARGETDURATION:1\n')), undefined)
})
