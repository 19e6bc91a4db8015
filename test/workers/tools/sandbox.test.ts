// The OS limits around ffmpeg/ffprobe: no file writes, and no child outliving the thread that spawned it.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { execChain } from '../../../workers/tools/sandbox.ts'
import type { Sandbox } from '../../../contract/types.ts'
import { processStat } from '../../../load/sampler.ts'
import { gone, waitFor } from '../../faults/helpers.ts'
import { tempFolder } from '../../temp-folder.ts'

const run = promisify(execFile)
const SANDBOX: Sandbox = { prlimit: 'prlimit', setpriv: 'setpriv', env: { PATH: process.env.PATH! }, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }

test('the command is wrapped in setpriv, then prlimit, which exec the tool in place', () => {
  const [bin, ...args] = execChain('ffmpeg', ['-version'], SANDBOX)
  assert.deepEqual([bin, ...args.slice(0, 4)], ['setpriv', '--pdeathsig', 'KILL', '--', 'prlimit'])
  assert.deepEqual(args.slice(-3), ['--', 'ffmpeg', '-version'])
  assert.ok(args.includes('--fsize=0'))
  assert.deepEqual(execChain('ffmpeg', ['-version'], { env: {}, addressSpaceBytes: 1, cpuSeconds: 1 }), ['ffmpeg', '-version'])
})

test('a sandboxed tool cannot write a file', async (t) => {
  const dir = tempFolder('thumbd-sandbox-', t)
  const target = join(dir, 'written')
  const [bin, ...args] = execChain('sh', ['-c', `printf data > ${target}`], SANDBOX)
  // The kernel stops the write itself (RLIMIT_FSIZE): not a missing prlimit, not a shell error.
  await assert.rejects(run(bin!, args), { signal: 'SIGXFSZ' })
  assert.ok(!existsSync(target) || (await run('stat', ['-c', '%s', target])).stdout.trim() === '0')
})

test('terminating the worker thread that spawned it kills the tool (parent-death signal)', async () => {
  const [bin, ...args] = execChain('sleep', ['30'], SANDBOX)
  const worker = new Worker(`
    const { spawn } = require('node:child_process')
    const { parentPort, workerData } = require('node:worker_threads')
    const child = spawn(workerData.bin, workerData.args, { stdio: 'ignore' })
    parentPort.postMessage(child.pid)
    setInterval(() => {}, 1000)
  `, { eval: true, workerData: { bin, args } })
  const pid = await new Promise<number>(resolve => worker.once('message', resolve))
  // Running, as the tool itself (setpriv and prlimit exec in place).
  await waitFor(() => processStat(pid)?.comm === 'sleep', 5000, 'the tool to start')
  await worker.terminate()
  assert.equal(await gone(pid), true, 'the tool died with its thread')
})
