// SIGTERM to `npm start`'s own pid, as systemd, a supervisor or a CI step sends it: npm passes it to its child,
// which must be node itself (package.json's start script execs it), so the server drains and exits as it
// does on a direct SIGTERM, and no orphaned node keeps serving.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { TEST_KEY } from '../helper.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'
import { decoderChildren, toolProcesses, upload, waitFor } from './helpers.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// The project's Node 24 first on PATH, as npm's scripts run: npm itself is the system's (its `env node` finds it).
const BIN = join(ROOT, 'node_modules/.bin')
const PATH = `${BIN}:${process.env.PATH}`

test('SIGTERM to npm start\'s pid reaches node: the request in flight finishes, npm exits 0, no node left serving', { timeout: 240_000 }, async (t) => {
  const tmp = tempFolder('thumbd-npm-start-', t)
  // Every setting in the environment: it wins over any .env the checkout may hold. A busy machine may run the
  // job slowly: the deadlines are long, the event-loop guard off; what is asserted is who gets the signal.
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { PATH, HOME: tmp, PORT: '0', HOST: '127.0.0.1', API_KEYS: TEST_KEY, TMP_DIR: tmp, LOG_LEVEL: 'info', POOL_THREADS: '1', SHUTDOWN_GRACE_MS: '90000', JOB_TIMEOUT_MS: '90000', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', MAX_QUEUE_WAIT_MS: '60000' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let log = ''
  npm.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  npm.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const exited = once(npm, 'exit') as Promise<[number | null, string | null]>
  let nodePid: number | undefined
  try {
    await waitFor(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(log), 60_000, `npm start to listen:\n${log}`)
    const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log)![1]!
    nodePid = Number(/"pid":(\d+)/.exec(log)![1])
    assert.notEqual(nodePid, npm.pid, 'node is a process of its own, under npm')
    assert.match(log, /GET URLs \(\/i\/\.\.\.\) are off: URL_SIGNING_KEYS is not set/, 'the start says whether GET URLs are on')
    assert.equal((await fetch(`${base}/health`)).status, 200)

    // A job in flight when the signal comes: draining must let it finish.
    const inFlight = upload(base, 'thumbnail', await media('slow-seek'), '?at=6')
    await waitFor(() => decoderChildren(nodePid).length > 0, 60_000, 'the job\'s ffmpeg to start')
    npm.kill('SIGTERM')
    await waitFor(() => log.includes('"draining"'), 20_000, `node to start draining:\n${log}`)
    assert.equal((await inFlight).status, 200, 'the request in flight finished')
    const [code, signal] = await exited
    assert.deepEqual([code, signal], [0, null], log)
    assert.match(log, /"closed"/)
    await waitFor(() => !existsSync(`/proc/${nodePid}`), 5000, 'node to be gone').catch(() => {})
    assert.ok(!existsSync(`/proc/${nodePid}`), `node ${nodePid} is gone`)
    await assert.rejects(fetch(`${base}/health`), 'nothing answers on the port any more')
    assert.deepEqual(readdirSync(tmp).filter(name => name !== '.npm'), [], 'TMP_DIR is empty')
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL')
    // A failed run's orphan would keep serving (and hold this test's pipes): end it and its tools.
    if (nodePid !== undefined && existsSync(`/proc/${nodePid}`)) {
      for (const left of toolProcesses(nodePid)) process.kill(left.pid, 'SIGKILL')
      process.kill(nodePid, 'SIGKILL')
    }
  }
})
