// The outputs of one video share one probe and one decode pass (workers/video-set/video-set.ts), and each is what its route
// makes: the poster, the sprite, the preview and the perceptual hash byte for byte as POST /api/thumbnail,
// /api/storyboard, /api/preview and /api/hash give them for the same options.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { postMedia } from '../helper.ts'
import { tempFolder } from '../temp-folder.ts'
import { buildJobsApp, jobsEnv, settled, submit } from './jobs-helper.ts'

const run = promisify(execFile)

test('a job\'s poster, storyboard, preview and hashes of a one-keyframe video come from one pass, each as its route makes it', async (t) => {
  // 10 s with x264's own GOP: one keyframe, so every exact seek decodes from the start.
  const file = join(tempFolder('thumbd-shared-pass-', t), 'v.mp4')
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=10', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', file])
  const video = await readFile(file)
  const env = await jobsEnv(t, { 'v.mp4': video })
  const app = await buildJobsApp(t, env.env)
  const res = await submit(app, {
    source: { url: `${env.origin}/v.mp4` },
    destination: `file://${env.root}/set`,
    outputs: [
      { kind: 'still', name: 'poster', at: '25%', width: 200 },
      { kind: 'storyboard', count: 6, columns: 3, width: 80 },
      { kind: 'preview', frames: 8, width: 96 },
      { kind: 'hashes' },
      { kind: 'info' }
    ]
  })
  assert.equal(res.statusCode, 202, res.body)
  const done = await settled(app, res.json().id, 120_000)
  assert.equal(done.state, 'done', JSON.stringify(done))
  for (const output of done.outputs) assert.equal(output.error, undefined, JSON.stringify(output))
  const metrics = (await app.inject({ url: '/metrics' })).body
  assert.match(metrics, /thumbd_jobs_total\{kind="video-set",outcome="ok"\} 1/, 'one step made them')
  assert.doesNotMatch(metrics, /thumbd_jobs_total\{kind="(thumbnail|storyboard|preview|perceptual)"/, 'no step of their own')

  const dir = join(env.root, 'set')
  const route = async (name: string, query: string) => {
    const reply = await postMedia(app, name, video, 'video/mp4', query)
    assert.equal(reply.statusCode, 200, `${name}: ${reply.body}`)
    return reply
  }
  assert.ok((await readFile(join(dir, 'poster.jpg'))).equals((await route('thumbnail', '?at=25%25&width=200')).rawPayload), 'poster')
  const board = (await route('storyboard', '?count=6&columns=3&width=80')).json()
  assert.ok((await readFile(join(dir, 'storyboard.jpg'))).equals(Buffer.from(board.sprite, 'base64')), 'sprite')
  assert.ok((await readFile(join(dir, 'preview.webp'))).equals((await route('preview', '?frames=8&width=96')).rawPayload), 'preview')
  const hashes = JSON.parse(await readFile(join(dir, 'hashes.json'), 'utf8'))
  assert.deepEqual(hashes.perceptual, (await route('hash', '')).json().perceptual, 'perceptual hash')
})
