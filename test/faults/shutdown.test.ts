// SIGTERM to a real server process, started exactly as `npm start` does.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts'
import { TEST_KEY } from '../helper.ts'
import { media } from '../media.ts'
import { decoderChildren, toolProcesses, upload, waitFor } from './helpers.ts'
import { tempFolder } from '../temp-folder.ts'

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))

test('SIGTERM under load: accepted requests finish with 200, later ones get 503 DRAINING, exit 0, nothing left behind', { timeout: 400_000 }, async (t) => {
  const tmp = tempFolder('thumbd-shutdown-', t)
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER], {
    // Its own quiet on a busy machine, where 4 slow seeks on 2 niced threads may take minutes: no job deadline or
    // admission bound that a slow machine alone would trip, a grace period longer than the jobs. The assertions
    // stand: every accepted request finishes, a later one gets DRAINING.
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', API_KEYS: TEST_KEY, TMP_DIR: tmp, LOG_LEVEL: 'info', POOL_THREADS: '2', SHUTDOWN_GRACE_MS: '240000', JOB_TIMEOUT_MS: '240000', MAX_QUEUE_WAIT_MS: '240000', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let log = ''
  server.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const exited = once(server, 'exit') as Promise<[number | null, string | null]>
  try {
    await waitFor(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(log), 60_000, 'the server to listen')
    const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log)![1]!
    const video = await media('slow-seek')

    const accepted = Array.from({ length: 4 }, () => upload(base, 'thumbnail', video, '?at=6'))
    await waitFor(() => (log.match(/"incoming request"/g) ?? []).length >= 4, 60_000, 'the requests to be accepted')
    await waitFor(() => decoderChildren(server.pid).length > 0, 60_000, 'a job to be running')
    server.kill('SIGTERM')
    await waitFor(() => log.includes('"draining"'), 20_000, 'draining to start')

    const late = await upload(base, 'thumbnail', await media('jpeg'))
    assert.equal(late.status, 503)
    assert.equal(JSON.parse(late.body.toString()).code, 'THUMBD_DRAINING')
    assert.ok(late.headers.get('retry-after'))
    const health = await fetch(`${base}/health`)
    assert.equal(health.status, 503)

    const results = await Promise.all(accepted)
    assert.deepEqual(results.map(r => r.status), [200, 200, 200, 200])
    const [code, signal] = await exited
    assert.deepEqual([code, signal], [0, null])
    assert.deepEqual(readdirSync(tmp), [], 'TMP_DIR is empty')
    // No process of the server's tools outlives it: no decoder, no zygote, no launcher, wherever it went.
    // Helpers die with it (parent-death signal, or their stdin closing): polled, the kernel is not instant.
    const left = () => toolProcesses(server.pid).map(p => `${p.pid} ${p.comm}`)
    await waitFor(() => left().length === 0, 3000, 'the server\'s tool processes to end').catch(() => {})
    assert.deepEqual(left(), [], 'no tool or helper process left')
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL')
    // Whatever a failed run left: it would hold this test's stderr (inherited) and keep the runner waiting.
    for (const left of toolProcesses(server.pid)) process.kill(left.pid, 'SIGKILL')
  }
})
