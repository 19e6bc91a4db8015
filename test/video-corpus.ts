// The videos people have, made by ffmpeg at test time (a fraction of a second each, cached between runs):
// 10-bit, HDR (HLG, PQ), alpha, anamorphic pixels. All show the same picture as `sdr`, the reference for
// colour checks. A recipe is one or two ffmpeg runs; a second run reads the first's output as IN.
import { execFile } from 'node:child_process'
import { mkdir, readFile, rename, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'

const run = promisify(execFile)
const CACHE = join(tmpdir(), 'thumbd-test-media-v1', 'corpus-v1')

const picture = (size = '320x180') => ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=5:duration=2`]
const x265 = ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1']
const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast']
/** The SDR picture in BT.2020 linear light, SDR white at BT.2408's 203 cd/m². */
const TO_HDR = 'format=gbrp,setparams=color_primaries=bt709:color_trc=bt709:colorspace=gbr:range=pc,zscale=t=linear:npl=203,format=gbrpf32le,zscale=p=bt2020'
const hdr = (curve: string) => ['-vf', `${TO_HDR},zscale=t=${curve}:m=2020_ncl:r=tv:npl=203,format=yuv420p10le`, '-color_primaries', 'bt2020', '-color_trc', curve, '-colorspace', 'bt2020nc']
/** Opaque on the left half, transparent on the right. */
const halfAlpha = (fmt: string) => ['-vf', `format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(X,W/2),255,0)',format=${fmt}`]
const IN = '{in}'
const COVER_JPEG = '{cover}'
const COVER_PNG = '{cover-png}'

const RECIPES = {
  sdr: ['sdr.mp4', [[...picture(), ...x264, '-pix_fmt', 'yuv420p']]],
  'h264-10bit': ['h264-10.mp4', [[...picture(), ...x264, '-pix_fmt', 'yuv420p10le']]],
  'h264-422-10bit': ['h264-422.mp4', [[...picture(), ...x264, '-pix_fmt', 'yuv422p10le']]],
  'hevc-12bit': ['hevc-12.mp4', [[...picture(), ...x265, '-pix_fmt', 'yuv420p12le']]],
  'vp9-10bit': ['vp9-10.webm', [[...picture(), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-pix_fmt', 'yuv420p10le']]],
  'av1-10bit': ['av1-10.mkv', [[...picture(), '-c:v', 'libsvtav1', '-preset', '12', '-pix_fmt', 'yuv420p10le', '-svtav1-params', 'verbosity=0']]],
  'prores-422': ['prores-422.mov', [[...picture(), '-c:v', 'prores_ks', '-profile:v', '2', '-pix_fmt', 'yuv422p10le']]],
  'prores-4444-alpha': ['prores-4444.mov', [[...picture(), ...halfAlpha('yuva444p10le'), '-c:v', 'prores_ks', '-profile:v', '4444']]],
  'vp9-alpha': ['vp9-alpha.webm', [[...picture(), ...halfAlpha('yuva420p'), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8']]],
  rgb48: ['rgb48.mkv', [[...picture(), '-c:v', 'ffv1', '-pix_fmt', 'rgb48le']]],
  grey10: ['grey10.mkv', [[...picture(), '-c:v', 'ffv1', '-pix_fmt', 'gray10le']]],
  // iPhone's HDR video: HEVC Main 10, HLG, BT.2020, recorded sideways (a 90° display matrix).
  'hlg-rotated': ['hlg-rotated.mov', [[...picture(), ...hdr('arib-std-b67'), ...x265], ['-i', IN, '-c', 'copy', '-metadata:s:v:0', 'rotate=90']]],
  hlg: ['hlg.mp4', [[...picture(), ...hdr('arib-std-b67'), ...x265]]],
  pq: ['pq.mkv', [[...picture(), ...hdr('smpte2084'), ...x265]]],
  // A PAL DVD frame: 720x576 of 64:45 pixels, 16:9 on screen.
  anamorphic: ['anamorphic.mp4', [[...picture('720x576'), '-vf', 'setsar=64/45', ...x264, '-pix_fmt', 'yuv420p']]],
  'lying-sar': ['lying-sar.mkv', [[...picture(), '-vf', 'setsar=1000/1', ...x264, '-pix_fmt', 'yuv420p']]],
  // Containers of camcorders, broadcast, discs and archives.
  ts: ['clip.ts', [[...picture(), ...x264, '-pix_fmt', 'yuv420p', '-f', 'mpegts']]],
  m2ts: ['clip.m2ts', [[...picture(), ...x264, '-pix_fmt', 'yuv420p', '-f', 'mpegts', '-mpegts_m2ts_mode', '1']]],
  // A PAL DVD: MPEG-2 of 64:45 pixels in a VOB (MPEG-PS), with MPEG audio.
  vob: ['dvd.vob', [[...picture('720x576'), '-f', 'lavfi', '-i', 'sine=d=2', '-vf', 'setsar=64/45', '-c:v', 'mpeg2video', '-c:a', 'mp2', '-f', 'vob']]],
  ogv: ['theora.ogv', [[...picture(), '-c:v', 'libtheora', '-f', 'ogg']]],
  wmv: ['wmv2.wmv', [[...picture(), '-c:v', 'wmv2', '-f', 'asf']]],
  flv: ['flv1.flv', [[...picture(), '-c:v', 'flv', '-f', 'flv']]],
  // Audio with cover art: ID3 APIC (JPEG), MP4 covr (PNG), FLAC PICTURE (PNG); and none.
  cover: ['cover.jpg', [['-f', 'lavfi', '-i', 'testsrc2=size=300x300', '-frames:v', '1']]],
  'cover-png': ['cover.png', [['-f', 'lavfi', '-i', 'testsrc2=size=300x300', '-frames:v', '1']]],
  mp3: ['cover.mp3', [['-f', 'lavfi', '-i', 'sine=d=1', '-i', COVER_JPEG, '-map', '0', '-map', '1', '-c:a', 'libmp3lame', '-c:v', 'copy', '-id3v2_version', '3', '-disposition:v', 'attached_pic']]],
  m4a: ['cover.m4a', [['-f', 'lavfi', '-i', 'sine=d=1', '-i', COVER_PNG, '-map', '0', '-map', '1', '-c:a', 'aac', '-c:v', 'copy', '-disposition:v', 'attached_pic', '-f', 'ipod']]],
  flac: ['cover.flac', [['-f', 'lavfi', '-i', 'sine=d=1', '-i', COVER_PNG, '-map', '0', '-map', '1', '-c:a', 'flac', '-c:v', 'copy', '-disposition:v', 'attached_pic']]],
  'mp3-bare': ['bare.mp3', [['-f', 'lavfi', '-i', 'sine=d=1', '-c:a', 'libmp3lame', '-id3v2_version', '0']]]
} as const satisfies Record<string, readonly [string, ReadonlyArray<readonly string[]>]>

export type CorpusName = keyof typeof RECIPES
export const DEEP = ['h264-10bit', 'h264-422-10bit', 'hevc-12bit', 'vp9-10bit', 'av1-10bit', 'prores-422', 'rgb48', 'grey10'] as const satisfies readonly CorpusName[]

const made = new Map<CorpusName, Promise<string>>()

export function corpusPath (name: CorpusName): Promise<string> {
  let path = made.get(name)
  if (path === undefined) {
    path = make(name)
    made.set(name, path)
  }
  return path
}

export async function corpus (name: CorpusName): Promise<Buffer> {
  return readFile(await corpusPath(name))
}

async function make (name: CorpusName): Promise<string> {
  const [file, steps] = RECIPES[name]
  const path = join(CACHE, file)
  if (await stat(path).then(s => s.size > 0, () => false)) return path
  await mkdir(CACHE, { recursive: true })
  let previous = ''
  for (const [i, args] of steps.entries()) {
    const out = join(CACHE, `${process.pid}-${i}-${file}`)
    const resolved = await Promise.all(args.map(async a => a === IN ? previous : a === COVER_JPEG ? corpusPath('cover') : a === COVER_PNG ? corpusPath('cover-png') : a))
    await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...resolved, out], { timeout: 60_000 })
    previous = out
  }
  await rename(previous, path)
  return path
}

/** Mean HSL saturation and lightness (0-1) of a picture, its alpha ignored. */
export async function saturationAndLightness (image: Buffer): Promise<{ saturation: number, lightness: number }> {
  const { data } = await sharp(image).removeAlpha().resize(160).raw().toBuffer({ resolveWithObject: true })
  let saturation = 0
  let lightness = 0
  for (let i = 0; i < data.length; i += 3) {
    const [r, g, b] = [data[i]! / 255, data[i + 1]! / 255, data[i + 2]! / 255]
    const [max, min] = [Math.max(r, g, b), Math.min(r, g, b)]
    const l = (max + min) / 2
    saturation += max === min ? 0 : (max - min) / (1 - Math.abs(2 * l - 1))
    lightness += l
  }
  const n = data.length / 3
  return { saturation: saturation / n, lightness: lightness / n }
}

/** An MP3 (ID3v2.3) whose APIC frame carries `picture`, whatever it is, declared as `mime`: a tag built by hand. */
export function mp3WithPicture (audio: Buffer, picture: Buffer, mime = 'image/jpeg'): Buffer {
  const body = Buffer.concat([Buffer.from([0]), Buffer.from(`${mime}\0`, 'latin1'), Buffer.from([3, 0]), picture])
  const frame = Buffer.concat([Buffer.from('APIC', 'latin1'), u32(body.length), Buffer.from([0, 0]), body])
  const size = frame.length
  const syncsafe = Buffer.from([(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f])
  return Buffer.concat([Buffer.from('ID3\x03\x00\x00', 'latin1'), syncsafe, frame, audio])
}

/** An Ogg Opus file whose comment header carries a FLAC PICTURE block (METADATA_BLOCK_PICTURE), as taggers write it. */
export async function opusWithPicture (out: string, picture: Buffer): Promise<void> {
  const mime = Buffer.from('image/jpeg')
  const block = Buffer.concat([u32(3), u32(mime.length), mime, u32(0), u32(300), u32(300), u32(24), u32(0), u32(picture.length), picture])
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=d=1', '-c:a', 'libopus', '-metadata', `METADATA_BLOCK_PICTURE=${block.toString('base64')}`, '-f', 'ogg', out], { timeout: 60_000 })
}

function u32 (n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
