// The shared queue: a real PostgreSQL from Debian's packages, started by the test (scripts/postgres-server.ts).
// Two app instances share it: what one takes, the other runs. And the lease: a server process SIGKILLed in the middle
// of a job leaves it to the other instance once its lease lapses, which finishes it without redoing the outputs the
// killed attempt wrote.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { AUTH, TEST_KEY } from '../helper.ts'
import { media } from '../media.ts'
import { postgresBin, startPostgres } from '../../scripts/postgres-server.ts'
import { buildJobsApp, eventually, jobsEnv, settled, submit } from './jobs-helper.ts'

const skip = postgresBin() === undefined ? 'no PostgreSQL here (scripts/install-os-deps.sh installs it)' : false

test('two instances share the PostgreSQL queue; a SIGKILLed worker\'s job is finished by the other after its lease', { skip }, async (t) => {
  const pg = await startPostgres()
  t.after(() => pg.stop())
  const video = await media('mp4-h264')
  const { env, origin, root } = await jobsEnv(t, { 'v.mp4': video }, { JOBS_QUEUE: pg.url })

  // Instance A only takes jobs; instance B runs them.
  const a = await buildJobsApp(t, { ...env, JOB_CONCURRENCY: '0' })
  const b = await buildJobsApp(t, env)
  const shared = await submit(a, { source: { url: `${origin}/v.mp4` }, destination: `file://${root}/shared`, outputs: [{ kind: 'still' }, { kind: 'info' }] })
  assert.equal(shared.statusCode, 202, shared.body)
  assert.equal((await settled(a, shared.json().id, 60_000)).state, 'done', 'run by B, seen by A')
  await b.close()

  // A server process (the product's own entry) takes the next job; it is killed once it has written an output.
  const server = spawn(process.execPath, ['src/server.ts'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', API_KEYS: TEST_KEY, LOG_LEVEL: 'warn', POOL_THREADS: '1' },
    stdio: 'ignore'
  })
  t.after(() => { server.kill('SIGKILL') })
  // The first output needs no step; the others are one step (a video-set), the kill lands in it.
  const outputs = [{ kind: 'hashes', name: 'first', perceptual: false }, { kind: 'still' }, { kind: 'storyboard', count: 6 }, { kind: 'preview', frames: 8 }]
  const res = await submit(a, { source: { url: `${origin}/v.mp4` }, destination: `file://${root}/killed`, outputs })
  const { id } = res.json()
  await eventually(async () => (await a.inject({ method: 'GET', url: `/api/jobs/${id}`, headers: AUTH })).json().progress.done >= 1, 60_000, 'an output written by the server process')
  server.kill('SIGKILL')
  const killedAt = Date.now()
  const firstWritten = (await stat(join(root, 'killed', 'first.json'))).mtimeMs
  assert.ok(!existsSync(join(root, 'killed', 'manifest.json')))

  const c = await buildJobsApp(t, env)
  const done = await settled(c, id, 60_000)
  assert.equal(done.state, 'done', JSON.stringify(done))
  assert.equal(done.attempts, 2, 'the killed attempt and the one that finished')
  assert.ok(Date.now() - killedAt >= 9000, 'not before the lease (10 s) lapsed')
  assert.deepEqual((await readdir(join(root, 'killed'))).sort(), ['first.json', 'manifest.json', 'preview.webp', 'still.jpg', 'storyboard.jpg', 'storyboard.vtt'])
  assert.equal((await stat(join(root, 'killed', 'first.json'))).mtimeMs, firstWritten, 'what the killed attempt wrote is not written again')
  assert.equal(done.outputs.length, 4)
})
