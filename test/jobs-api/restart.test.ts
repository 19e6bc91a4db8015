// Jobs survive a restart: a job queued by a server that runs none (JOB_CONCURRENCY=0) and then stops is run by the
// next server on the same JOBS_DATA_DIR, which opens the embedded queue at start because its database exists.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { media } from '../media.ts'
import { buildJobsApp, jobsEnv, settled, submit } from './jobs-helper.ts'

test('a queued job is run after a restart; a server that never took a job does not open the queue', async (t) => {
  const { env, origin, root, dataDir } = await jobsEnv(t, { 'p.jpg': await media('jpeg') })
  const idle = await buildJobsApp(t, { ...env, JOBS_DATA_DIR: join(dataDir, 'never-used') })
  assert.equal(idle.batch.opened(), false, 'the embedded queue is loaded only for a job')
  await idle.close()

  const first = await buildJobsApp(t, { ...env, JOB_CONCURRENCY: '0' })
  const res = await submit(first, { source: { url: `${origin}/p.jpg` }, destination: `file://${root}/r`, outputs: [{ kind: 'variant', width: 50 }] })
  assert.equal(res.statusCode, 202, res.body)
  const { id } = res.json()
  assert.equal((await settled(first, id, 1500).catch(() => ({ state: 'queued' }))).state, 'queued')
  await first.close()

  const second = await buildJobsApp(t, env)
  assert.equal(second.batch.opened(), true, 'opened at start: its database may hold jobs')
  const done = await settled(second, id, 30_000)
  assert.equal(done.state, 'done', JSON.stringify(done))
  assert.ok(existsSync(join(root, 'r', 'variant.jpg')))
})
