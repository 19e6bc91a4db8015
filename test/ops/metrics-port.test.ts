// METRICS_PORT: /metrics on a listener of its own, closed on the API port; a real server process, as `npm start` runs it.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts'
import { TEST_KEY } from '../helper.ts'
import { toolProcesses, waitFor } from '../faults/helpers.ts'
import { tempFolder } from '../temp-folder.ts'

const SERVER = fileURLToPath(new URL('../../src/server.ts', import.meta.url))

/** A loopback port free a moment ago (METRICS_PORT=0 means "on PORT", so the test picks one). */
async function freePort (): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as { port: number }
  probe.close()
  await once(probe, 'close')
  return port
}

const refused = (url: string) => fetch(url).then(() => false, (err: Error & { cause?: { code?: string } }) => err.cause?.code === 'ECONNREFUSED')

test('with METRICS_PORT set, /metrics is 404 on the API port and served on its own listener; both listeners close on SIGTERM', async (t) => {
  const metricsPort = await freePort()
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1', API_KEYS: TEST_KEY, TMP_DIR: tempFolder('thumbd-metrics-port-', t), LOG_LEVEL: 'info', POOL_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let log = ''
  server.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const exited = once(server, 'exit') as Promise<[number | null, string | null]>
  try {
    await waitFor(() => /metrics listening at/.test(log), 20_000, 'both listeners to listen')
    const base = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log)![1]!
    const metricsBase = `http://127.0.0.1:${metricsPort}`
    // Before: served here to anyone who reaches the API, ffmpeg build included.
    const onApi = await fetch(`${base}/metrics`)
    assert.equal(onApi.status, 404)
    assert.equal((await onApi.json()).code, 'THUMBD_NOT_FOUND')
    assert.equal((await fetch(`${base}/health/live`)).status, 200, 'the API port still serves the rest')
    const own = await fetch(`${metricsBase}/metrics`)
    assert.equal(own.status, 200)
    assert.match(own.headers.get('content-type') ?? '', /^text\/plain/)
    const text = await own.text()
    assert.match(text, /^thumbd_tools_info\{/m)
    assert.match(text, /^thumbd_http_request_duration_seconds_count\{method="GET",route="\/health\/live",status_code="200"\} 1$/m, 'it counts the API port\'s requests')
    assert.equal((await fetch(`${metricsBase}/health`)).status, 404, 'the metrics listener serves /metrics only')
    server.kill('SIGTERM')
    const [code, signal] = await exited
    assert.deepEqual([code, signal], [0, null])
    assert.ok(await refused(`${base}/health/live`), 'the API listener is closed')
    assert.ok(await refused(`${metricsBase}/metrics`), 'the metrics listener is closed')
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL')
    for (const left of toolProcesses(server.pid)) process.kill(left.pid, 'SIGKILL')
  }
})
