// Dolby Vision profile 8 (issue 31): what iPhones write (8.4, an HLG base layer, in `hvc1`) and streaming
// encoders (8.1, an HDR10 base layer, often in `dvh1`). ffmpeg decodes the base layer; its colour tags are the
// base layer's, so the poster must be the same tone-mapped SDR rendition as the plain HLG or PQ file's.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { build, decoded, leftoverTempFiles, postMedia, thumbnailOf } from '../helper.ts'
import { withDolbyVisionConfig } from '../dolby-vision-media.ts'
import { tempFolder } from '../temp-folder.ts'
import { corpus, corpusPath, saturationAndLightness } from '../video-corpus.ts'

const run = promisify(execFile)

async function dolbyVisionProfile (path: string): Promise<string> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=codec_tag_string:stream_side_data=dv_profile,dv_bl_signal_compatibility_id', '-of', 'csv=p=0', path])
  return stdout.trim().replace(/\s+/g, ',')
}

test('Dolby Vision 8.4 (HLG base) and 8.1 (HDR10 base), in hvc1 and dvh1, give the tone-mapped SDR poster, storyboard, hash and info', async (t) => {
  const app = await build(t)
  const dir = tempFolder('thumbd-dolby-vision-', t)
  const pqMp4 = join(dir, 'pq.mp4')
  await run('ffmpeg', ['-v', 'error', '-y', '-i', await corpusPath('pq'), '-c', 'copy', '-tag:v', 'hvc1', pqMp4])
  const cases = [
    ['8.4 hvc1', withDolbyVisionConfig(await corpus('hlg'), { profile: 8, level: 4, compatibility: 4 }), 'arib-std-b67'],
    ['8.4 dvh1', withDolbyVisionConfig(await corpus('hlg'), { profile: 8, level: 4, compatibility: 4, sampleEntry: 'dvh1' }), 'arib-std-b67'],
    ['8.1 dvh1', withDolbyVisionConfig(await readFile(pqMp4), { profile: 8, level: 6, compatibility: 1, sampleEntry: 'dvh1' }), 'smpte2084']
  ] as const
  const reference = await saturationAndLightness(await thumbnailOf(app, await corpus('sdr'), 'video/mp4', '?format=png', 'image/png'))
  for (const [name, video, transfer] of cases) {
    // The files are what they claim: ffprobe sees the Dolby Vision configuration.
    const path = join(dir, `${name.replace(' ', '-')}.mp4`)
    await writeFile(path, video)
    const [tag, profile, compatibility] = (await dolbyVisionProfile(path)).split(',')
    assert.deepEqual([tag, profile, compatibility], [name.split(' ')[1], '8', name.startsWith('8.4') ? '4' : '1'], name)

    const poster = await thumbnailOf(app, video, 'video/mp4', '?format=png', 'image/png')
    const { width, height } = await decoded(poster)
    assert.deepEqual([width, height], [320, 180], name)
    const { saturation, lightness } = await saturationAndLightness(poster)
    assert.ok(saturation > reference.saturation * 0.9 && saturation < reference.saturation * 1.1, `${name}: saturation ${saturation} vs SDR ${reference.saturation}`)
    assert.ok(Math.abs(lightness - reference.lightness) < 0.05, `${name}: lightness ${lightness} vs SDR ${reference.lightness}`)

    const info = await postMedia(app, 'info', video, 'video/mp4')
    assert.equal(info.statusCode, 200, info.body)
    assert.deepEqual([info.json().bitDepth, info.json().colorTransfer, info.json().hdr], [10, transfer, true], name)
    const board = await postMedia(app, 'storyboard', video, 'video/mp4', '?count=2&width=64')
    assert.equal(board.statusCode, 200, `${name} storyboard: ${board.body}`)
    const hash = await postMedia(app, 'hash', video, 'video/mp4')
    assert.equal(hash.statusCode, 200, `${name} hash: ${hash.body}`)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})
