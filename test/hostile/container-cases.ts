// The hostile cases of the containers added for issue 31 (MPEG-TS, MPEG-PS, Ogg, ASF, FLV) and of audio
// files: each truncated, each carrying a playlist behind its magic, each a bomb of its own kind. None of these
// demuxers follows a reference to another file (ffmpeg 5.1: no dref-like field in TS, PS, Ogg, ASF or FLV;
// an ASX redirector is XML, refused by sniffing): the playlist cases stand for that attack.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { corpus, corpusPath, mp3WithPicture } from '../video-corpus.ts'
import { tempFolder } from '../temp-folder.ts'
import type { HostileCase, Sentinel } from './corpus.ts'

const run = promisify(execFile)
const unreadable = { status: 422, code: 'THUMBD_MEDIA_UNREADABLE' }
const tooLarge = { status: 413, code: 'THUMBD_PAYLOAD_TOO_LARGE' }
const unsupported = { status: 415, code: 'THUMBD_UNSUPPORTED_MEDIA' }

const cut = (b: Buffer, n: number) => Buffer.from(b.subarray(0, n))

/** One video stream of `source` mapped `copies` times into `format` (audio streams of a sine added, for MPEG-PS's 16-video cap). */
async function manyStreams (source: string, format: string, copies: number, audioCopies = 0): Promise<Buffer> {
  const out = join(tempFolder('thumbd-streams-'), `many.${format}`)
  const sine = audioCopies === 0 ? [] : ['-f', 'lavfi', '-i', 'sine=d=1']
  const maps = [...Array.from({ length: copies }, () => ['-map', '0:v']), ...Array.from({ length: audioCopies }, () => ['-map', '1:a'])].flat()
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'fatal', '-i', source, ...sine, ...maps, '-t', '0.4', '-c:v', 'copy', '-c:a', 'mp2', '-f', format, out])
  return readFile(out)
}

/** An FLV whose onMetaData says it lasts 10^9 s (ffmpeg takes the container's word for the duration). */
function flvLasting (flv: Buffer, seconds: number): Buffer {
  const copy = Buffer.from(flv)
  const at = copy.indexOf('duration', 0, 'latin1')
  copy.writeDoubleBE(seconds, at + 'duration'.length + 1) // after the AMF number marker
  return copy
}

/** `magic` then the playlist: sniffed as that container, read by its (forced) demuxer, which finds no media in it. */
const behind = (magic: Buffer, playlist: string, pad = 0) => {
  const bytes = Buffer.concat([magic, Buffer.from(playlist)])
  return pad === 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(Math.max(0, pad - bytes.length)), Buffer.from([0x47]), Buffer.alloc(pad - 1)])
}

export async function containerCases (sentinel: Sentinel): Promise<HostileCase[]> {
  const playlist = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nfile://${sentinel.videoPath}\n#EXT-X-ENDLIST\n`
  const [ts, vob, ogv, wmv, flv, mp3, bare, jpeg] = await Promise.all((['ts', 'vob', 'ogv', 'wmv', 'flv', 'mp3', 'mp3-bare', 'cover'] as const).map(n => corpus(n)))
  const bomb = Buffer.from(jpeg)
  const sof = bomb.indexOf(Buffer.from([0xff, 0xc0]))
  bomb.writeUInt16BE(65_000, sof + 5)
  bomb.writeUInt16BE(65_000, sof + 7)
  const asf = wmv.subarray(0, 16)
  const oggTheora = Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x2a\x80theora', 'latin1')
  return [
    { name: 'truncated MPEG-TS (its tables only)', attack: 'corrupt', bytes: cut(ts, 188 * 3), contentType: 'video/mp2t', expect: unreadable },
    { name: 'truncated MPEG-PS (its pack and system headers)', attack: 'corrupt', bytes: cut(vob, 64), contentType: 'video/mpeg', expect: unreadable },
    { name: 'truncated Ogg Theora (its headers only)', attack: 'corrupt', bytes: cut(ogv, 120), contentType: 'video/ogg', expect: unreadable },
    { name: 'truncated ASF (its header only)', attack: 'corrupt', bytes: cut(wmv, 600), contentType: 'video/x-ms-asf', expect: unreadable },
    { name: 'truncated FLV (its header only)', attack: 'corrupt', bytes: cut(flv, 100), contentType: 'video/x-flv', expect: unreadable },
    { name: 'HLS playlist behind MPEG-TS sync bytes', attack: 'playlist', bytes: behind(Buffer.from([0x47]), playlist, 188), contentType: 'video/mp2t', expect: unreadable },
    { name: 'HLS playlist behind an MPEG-PS pack header', attack: 'playlist', bytes: behind(Buffer.from([0, 0, 1, 0xba]), playlist), contentType: 'video/mpeg', expect: unreadable },
    { name: 'HLS playlist behind an Ogg Theora page', attack: 'playlist', bytes: behind(oggTheora, playlist), contentType: 'video/ogg', expect: unreadable },
    { name: 'HLS playlist behind the ASF header GUID', attack: 'playlist', bytes: behind(asf, playlist), contentType: 'video/x-ms-asf', expect: unreadable },
    { name: 'HLS playlist behind an FLV header', attack: 'playlist', bytes: behind(Buffer.from('FLV\x01\x01\x00\x00\x00\x09\x00\x00\x00\x00', 'latin1'), playlist), contentType: 'video/x-flv', expect: unreadable },
    { name: 'HLS playlist behind an ID3 tag', attack: 'playlist', bytes: behind(Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00', 'latin1'), playlist), contentType: 'audio/mpeg', expect: unreadable },
    { name: 'ASX redirector to a local file', attack: 'not media', bytes: Buffer.from(`<ASX version="3.0"><Entry><Ref href="file://${sentinel.videoPath}"/></Entry></ASX>\n`), contentType: 'video/x-ms-asf', expect: unsupported },
    { name: 'MPEG-TS with 100 streams (PIDs)', attack: 'bomb', bytes: await manyStreams(await corpusPath('ts'), 'mpegts', 100), contentType: 'video/mp2t', expect: unreadable },
    { name: 'MPEG-PS with 36 streams', attack: 'bomb', bytes: await manyStreams(await corpusPath('vob'), 'vob', 16, 20), contentType: 'video/mpeg', expect: unreadable },
    { name: 'Ogg with 100 Theora streams', attack: 'bomb', bytes: await manyStreams(await corpusPath('ogv'), 'ogg', 100), contentType: 'video/ogg', expect: unreadable },
    { name: 'ASF with 100 streams', attack: 'bomb', bytes: await manyStreams(await corpusPath('wmv'), 'asf', 100), contentType: 'video/x-ms-asf', expect: unreadable },
    { name: 'FLV declaring a 10^9 s duration', attack: 'bomb', bytes: flvLasting(flv, 1e9), contentType: 'video/x-flv', expect: tooLarge },
    { name: 'MP3 whose cover art declares 65000x65000', attack: 'bomb', bytes: mp3WithPicture(bare, bomb), contentType: 'audio/mpeg', expect: tooLarge },
    { name: 'truncated MP3 (inside its cover art)', attack: 'corrupt', bytes: cut(mp3, mp3.indexOf(Buffer.from([0xff, 0xd8])) + 400), contentType: 'audio/mpeg', expect: unreadable }
  ]
}
