// The Docker image's ffmpeg is built with only what scripts/build-ffmpeg.sh lists (--disable-everything).
// Building it takes ~10 minutes, too long for a test; what it must hold is checked here instead: every demuxer
// contract/sniff.ts forces, every filter, encoder, muxer and protocol the code's command lines name, and a
// decoder (by the host ffmpeg's own table of decoders) for every stream of the test media. With
// THUMBD_FFMPEG_BIN naming a build's bin directory (the image's, copied out), that build also reads every clip
// as thumbd runs it: probe, then a frame through the colour path the probe gives (or the cover picture).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { frameArgs, passArgs, pictureArgs, probeArgs } from '../../workers/video/ffmpeg-args.ts'
import { videoInput } from '../../workers/video/video-input.ts'
import { colourPath, probeFacts, type ColourPath, type ProbeColour } from '../../workers/video/stream-colour.ts'
import { sniff } from '../../contract/sniff.ts'
import { corpusPath, type CorpusName } from '../video-corpus.ts'
import { VIDEOS, mediaPath } from '../media.ts'
import { CLASS_NAMES, matrixClip } from '../video-matrix.ts'

const run = promisify(execFile)
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8')

/** The script's lists (NAME="a b c"), as configure's names. */
function buildLists (): Record<string, Set<string>> {
  const script = read('scripts/build-ffmpeg.sh')
  return Object.fromEntries([...script.matchAll(/^([A-Z_]+)="([^"]*)"/gm)].map(m => [m[1]!, new Set(m[2]!.split(/\s+/).filter(Boolean))]))
}

const lists = buildLists()
const decoders = new Set([...lists.VIDEO_DECODERS!, ...lists.PICTURE_DECODERS!, ...lists.AUDIO_DECODERS!])
/** ffmpeg's run-time names of a component against configure's (libvpx-vp9: libvpx_vp9; the "mpeg" demuxer: mpegps). */
const configName = (name: string) => name === 'mpeg' ? 'mpegps' : name.replaceAll('-', '_')

/** The filter names of a -vf chain (quoted expressions may hold commas). */
function filterNames (chain: string): string[] {
  const unquoted = chain.replace(/'[^']*'/g, '')
  return unquoted.split(',').map(step => step.split('=')[0]!.trim()).filter(Boolean)
}

/** Components a command line names: decoders and demuxers before -i, encoders and muxers after, filters of -vf. */
function named (args: string[]) {
  const input = args.indexOf('-i')
  const valuesOf = (flag: string, from: number, to: number) => args.slice(from, to).flatMap((a, i, all) => a === flag ? [all[i + 1]!] : [])
  return {
    decoders: valuesOf('-c:v', 0, input),
    demuxers: valuesOf('-f', 0, input),
    encoders: valuesOf('-c:v', input, args.length),
    muxers: valuesOf('-f', input, args.length),
    filters: valuesOf('-vf', input, args.length).flatMap(filterNames),
    protocols: valuesOf('-protocol_whitelist', 0, input).flatMap(p => p.split(',')).concat(args.at(-1) === 'pipe:1' ? ['pipe'] : [])
  }
}

/** The command lines thumbd runs, over every colour path, turn, bound and input kind it has. */
function commandLines (): string[][] {
  const inputs = [videoInput({ location: 'file', path: '/tmp/in' }), videoInput({ location: 'remote', url: 'http://127.0.0.1:1/x', port: 1 })]
  const colours: ColourPath[] = (['sdr', 'bt2020', 'pq', 'hlg'] as const).map(dynamic => ({ dynamic, matrix: 'bt709', range: 'tv' }))
  const common = { demuxer: 'mov' as const, threads: 1, maxPixels: 1e8, maxStreams: 16 }
  const lines: string[][] = []
  for (const input of inputs) {
    lines.push(probeArgs(input, 'mov', true), pictureArgs(input, 'mp3', 16, 1e8))
    for (const colour of colours) {
      for (const fit of ['crop', 'stretch', 'inside'] as const) {
        const bound = { width: 320, height: 320, fit }
        lines.push(frameArgs({ ...common, input, decoder: 'libvpx-vp9', seekSeconds: 1, keyframe: true, upTo: 10, bestOf: 0, report: true, showTime: true, coverBox: { width: 320 }, bound, colour }))
        lines.push(frameArgs({ ...common, input, seekSeconds: 1, bestOf: 50, report: false, coverBox: { height: 200 }, bound, colour }))
        for (const turned of [0, 90, 180, 270]) lines.push(passArgs({ ...common, input, interval: 1, count: 4, turned, coverBox: { width: 160, height: 90 }, bound, colour }))
      }
    }
  }
  return lines
}

test('the ffmpeg build holds every demuxer sniff forces and every filter, encoder, muxer and protocol thumbd names', () => {
  const sniff = read('contract/sniff.ts')
  const demuxers = /export type Demuxer = ([^\n]+)/.exec(sniff)![1]!.match(/'[a-z0-9]+'/g)!.map(d => d.slice(1, -1))
  assert.ok(demuxers.length >= 10, 'the Demuxer type was read')
  const wanted = { DEMUXERS: new Set(demuxers), VIDEO_DECODERS: new Set<string>(), FILTERS: new Set<string>(), ENCODERS: new Set<string>(), MUXERS: new Set<string>(), PROTOCOLS: new Set<string>() }
  for (const args of commandLines()) {
    const n = named(args)
    n.demuxers.forEach(d => wanted.DEMUXERS.add(d))
    n.decoders.forEach(d => wanted.VIDEO_DECODERS.add(d))
    n.filters.forEach(f => wanted.FILTERS.add(f))
    n.encoders.filter(e => e !== 'copy').forEach(e => wanted.ENCODERS.add(e))
    n.muxers.forEach(m => wanted.MUXERS.add(m))
    n.protocols.forEach(p => wanted.PROTOCOLS.add(p))
  }
  for (const filter of ['zscale', 'tonemap', 'thumbnail', 'transpose', 'showinfo', 'select']) assert.ok(wanted.FILTERS.has(filter), `the command lines were read (${filter})`)
  for (const [list, names] of Object.entries(wanted)) {
    for (const name of names) assert.ok(lists[list]!.has(configName(name)), `scripts/build-ffmpeg.sh's ${list} lacks ${configName(name)}`)
  }
})

/** The test corpus's names, read from its recipe table. */
function corpusNames (): CorpusName[] {
  const source = read('test/video-corpus.ts')
  const table = source.slice(source.indexOf('const RECIPES = {'), source.indexOf('} as const satisfies'))
  return [...table.matchAll(/^ {2}'?([\w-]+)'?: \['/gm)].map(m => m[1]! as CorpusName)
}

/** Every clip of the test media (the corpus' covers are inside its audio files). */
async function testClips (): Promise<string[]> {
  const names = corpusNames()
  assert.ok(names.length >= 25, `the corpus recipes were read (${names.length})`)
  // One at a time: each may be made by ffmpeg first (cached between runs).
  const files: string[] = []
  for (const name of names) if (name !== 'cover' && name !== 'cover-png') files.push(await corpusPath(name))
  for (const name of VIDEOS) files.push(await mediaPath(name))
  for (const colour of CLASS_NAMES) files.push(await matrixClip(colour, 0))
  return files
}

test('the ffmpeg build has a decoder for every stream of the test media: corpus, matrix, videos, covers', { timeout: 600_000 }, async () => {
  // The host's (Debian's) ffmpeg names the codec each decoder reads: "libdav1d ... (codec av1)".
  const { stdout: table } = await run('ffmpeg', ['-hide_banner', '-decoders'])
  const codecOf = new Map([...table.matchAll(/^ [VAS][.A-Z]{5} (\S+) +.*?(?:\(codec (\S+)\))?$/gm)].map(m => [configName(m[1]!), m[2] ?? m[1]!]))
  const decodable = new Set([...decoders].map(d => codecOf.get(d) ?? d))
  const missing = new Set<string>()
  for (const file of await testClips()) {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name', '-of', 'json', file])
    for (const stream of (JSON.parse(stdout) as { streams: Array<{ codec_name?: string, codec_type: string }> }).streams) {
      if (stream.codec_type !== 'data' && !decodable.has(stream.codec_name ?? '')) missing.add(`${stream.codec_type} ${stream.codec_name} (${file})`)
    }
  }
  assert.deepEqual([...missing], [], 'every stream has a decoder in scripts/build-ffmpeg.sh')
})

const BUILD = process.env.THUMBD_FFMPEG_BIN
test('a built ffmpeg (THUMBD_FFMPEG_BIN) reads every clip of the test media as thumbd runs it', { skip: BUILD === undefined, timeout: 600_000 }, async () => {
  const failed: string[] = []
  for (const file of await testClips()) {
    const media = sniff(readFileSync(file).subarray(0, 4096))
    assert.ok(media !== undefined && media.kind !== 'image', `${file} is sniffed as a video or audio`)
    const input = videoInput({ location: 'file', path: file })
    const probe = await run(join(BUILD!, 'ffprobe'), probeArgs(input, media.demuxer, true), { timeout: 60_000 }).catch((err: { stderr: string }) => ({ stdout: '', stderr: err.stderr }))
    if (probe.stdout === '') { failed.push(`${file}: probe: ${probe.stderr.trim().slice(0, 200)}`); continue }
    const video = (JSON.parse(probe.stdout) as { streams: Array<ProbeColour & { codec_type: string }> }).streams.find(s => s.codec_type === 'video')
    const args = media.kind === 'audio'
      ? pictureArgs(input, media.demuxer, 16, 1e8)
      : frameArgs({ input, demuxer: media.demuxer, ...(media.decoder === undefined ? {} : { decoder: media.decoder }), seekSeconds: 0, bestOf: 0, threads: 1, maxPixels: 1e8, maxStreams: 16, report: false, coverBox: { width: 320 }, colour: colourPath(probeFacts(video ?? {})) })
    const frame = await run(join(BUILD!, 'ffmpeg'), args, { encoding: 'buffer', timeout: 60_000, maxBuffer: 64 << 20 }).catch((err: { stderr: Buffer }) => ({ stdout: Buffer.alloc(0), stderr: err.stderr }))
    if (frame.stdout.length === 0 && !file.endsWith('bare.mp3')) failed.push(`${file}: ${frame.stderr.toString().trim().slice(0, 200)}`)
  }
  assert.deepEqual(failed, [], `${BUILD}'s ffmpeg reads every clip`)
})
