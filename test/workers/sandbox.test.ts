// The OS limits around ffmpeg/ffprobe: no file writes, and no child outliving the thread that spawned it.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { sandboxed } from '../../workers/ffmpeg-args.ts'
import type { Sandbox } from '../../workers/types.ts'

const run = promisify(execFile)
const SANDBOX: Sandbox = { prlimit: 'prlimit', setpriv: 'setpriv', env: { PATH: process.env.PATH! }, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }

test('the command is wrapped in prlimit and setpriv, which exec the tool in place', () => {
  const [bin, args] = sandboxed('ffmpeg', ['-version'], SANDBOX)
  assert.equal(bin, 'prlimit')
  assert.deepEqual(args.slice(-6), ['setpriv', '--pdeathsig', 'KILL', '--', 'ffmpeg', '-version'])
  assert.ok(args.includes('--fsize=0'))
  assert.deepEqual(sandboxed('ffmpeg', ['-version'], { env: {}, addressSpaceBytes: 1, cpuSeconds: 1 }), ['ffmpeg', ['-version']])
})

test('a sandboxed tool cannot write a file', async () => {
  const target = join(mkdtempSync(join(tmpdir(), 'thumbd-sandbox-')), 'written')
  await assert.rejects(run(...sandboxed('sh', ['-c', `printf data > ${target}`], SANDBOX)))
  assert.ok(!existsSync(target) || (await run('stat', ['-c', '%s', target])).stdout.trim() === '0')
})

test('terminating the worker thread that spawned it kills the tool (parent-death signal)', async () => {
  const [bin, args] = sandboxed('sleep', ['30'], SANDBOX)
  const worker = new Worker(`
    const { spawn } = require('node:child_process')
    const { parentPort, workerData } = require('node:worker_threads')
    const child = spawn(workerData.bin, workerData.args, { stdio: 'ignore' })
    parentPort.postMessage(child.pid)
    setInterval(() => {}, 1000)
  `, { eval: true, workerData: { bin, args } })
  const pid = await new Promise<number>(resolve => worker.once('message', resolve))
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.doesNotThrow(() => process.kill(pid, 0), 'the tool is running')
  await worker.terminate()
  const until = Date.now() + 3000
  let alive = true
  while (alive && Date.now() < until) {
    await new Promise(resolve => setTimeout(resolve, 50))
    try { process.kill(pid, 0) } catch { alive = false }
    // A zombie (killed, not yet reaped by this process) counts as gone.
    if (alive) alive = !(await run('ps', ['-o', 'stat=', '-p', String(pid)]).then(r => r.stdout.trim().startsWith('Z'), () => true))
  }
  assert.equal(alive, false, 'the tool died with its thread')
})
