// Tools start through a launcher process per thread; they must behave as if spawned here, and nothing may
// outlive the thread, the launcher or the job.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { processTree } from '../../../load/sampler.ts'
import { gone } from '../../faults/helpers.ts'
import { setLauncherIdleMs } from '../../../workers/tools/launcher.ts'
import { runTool, type ToolLimits } from '../../../workers/tools/run-tool.ts'
import type { Sandbox } from '../../../contract/types.ts'

const SANDBOX: Sandbox = { prlimit: 'prlimit', setpriv: 'setpriv', env: { PATH: process.env.PATH! }, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }
const limits = (signal = new AbortController().signal): ToolLimits => ({ signal, maxStdoutBytes: 1 << 24, children: new SharedArrayBuffer(4), sandbox: SANDBOX, anyExitCode: true })

/** Live (not zombie) children of pid, with their command lines. */
function children (pid: number): Array<{ pid: number, cmdline: string }> {
  return processTree(pid).filter(p => p.ppid === pid && p.state !== 'Z').flatMap(p => {
    try {
      return [{ pid: p.pid, cmdline: readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').replaceAll('\0', ' ') }]
    } catch {
      return [] // gone since the listing
    }
  })
}
const launcherOf = (pid: number) => children(pid).find(c => c.cmdline.includes('launcher-process.ts'))

test('a tool started through the launcher gets the sandbox\'s environment and nothing else of this process\'s', async () => {
  // The launcher is started once per thread; this variable is set before its first run in this file.
  process.env.THUMBD_TEST_SECRET = 'not for the tools'
  const { stdout } = await runTool('sh', ['-c', 'env'], limits())
  delete process.env.THUMBD_TEST_SECRET
  const environ = stdout.toString().split('\n').filter(Boolean)
  assert.ok(environ.includes(`PATH=${process.env.PATH}`), 'the sandbox\'s environment')
  assert.ok(!environ.some(v => v.startsWith('THUMBD_TEST_SECRET')), 'and nothing else of this process\'s')
})

test('a tool started through the launcher gives back its output, stderr and exit code', async () => {
  const big = 3 * 2 ** 20 // more than one pipe's worth: frames must be reassembled
  const out = await runTool('sh', ['-c', `head -c ${big} /dev/zero; printf 'to stderr' >&2; exit 3`], limits())
  assert.equal(out.code, 3)
  assert.equal(out.stdout.length, big)
  assert.ok(out.stdout.every(byte => byte === 0))
  assert.equal(out.stderr, 'to stderr')
  await assert.rejects(runTool('/nonexistent/ffmpeg', [], limits()), { code: 'VIDEO_UNAVAILABLE' })
  const launcher = launcherOf(process.pid)
  assert.ok(launcher !== undefined, 'the tools ran under a launcher, a child of this process')
  assert.ok(launcher.cmdline.startsWith('node') || launcher.cmdline.includes(process.execPath))
})

test('a cancelled tool is killed by its launcher', async () => {
  const abort = new AbortController()
  const running = runTool('sleep', ['30'], limits(abort.signal))
  await new Promise(resolve => setTimeout(resolve, 300))
  const launcher = launcherOf(process.pid)!
  const [sleeper] = children(launcher.pid)
  assert.ok(sleeper?.cmdline.includes('sleep 30'))
  abort.abort(new Error('cancelled'))
  await assert.rejects(running, /cancelled/)
  assert.ok(await gone(sleeper.pid))
})

test('a launcher that dies fails its running tools, kills them, and the next tool gets a new launcher', async () => {
  const running = runTool('sleep', ['30'], limits())
  await new Promise(resolve => setTimeout(resolve, 300))
  const launcher = launcherOf(process.pid)!
  const [sleeper] = children(launcher.pid)
  process.kill(launcher.pid, 'SIGKILL')
  await assert.rejects(running, { code: 'INTERNAL' })
  assert.ok(await gone(sleeper!.pid), 'the tool died with its launcher (parent-death signal)')
  const next = await runTool('sh', ['-c', 'printf ok'], limits())
  assert.equal(next.stdout.toString(), 'ok')
  assert.notEqual(launcherOf(process.pid)?.pid, launcher.pid)
})

test('terminating the thread kills its launcher and the tools it started', async () => {
  const worker = new Worker(new URL('data:text/javascript,' + encodeURIComponent(`
    import { workerData, parentPort } from 'node:worker_threads'
    const { runTool } = await import(workerData.spawn)
    runTool('sleep', ['30'], { signal: new AbortController().signal, maxStdoutBytes: 1024, children: new SharedArrayBuffer(4), sandbox: workerData.sandbox }).catch(() => {})
    parentPort.postMessage('started')
    setInterval(() => {}, 1000)
  `)), { workerData: { spawn: new URL('../../../workers/tools/run-tool.ts', import.meta.url).href, sandbox: SANDBOX } })
  await new Promise(resolve => worker.once('message', resolve))
  await new Promise(resolve => setTimeout(resolve, 500))
  const launchers = children(process.pid).filter(c => c.cmdline.includes('launcher-process.ts'))
  const sleepers = launchers.flatMap(l => children(l.pid)).filter(c => c.cmdline.includes('sleep 30'))
  assert.equal(sleepers.length, 1, 'the thread\'s tool is running')
  const launcher = launchers.find(l => children(l.pid).some(c => c.pid === sleepers[0]!.pid))!
  await worker.terminate()
  assert.ok(await gone(launcher.pid), 'the launcher died with its thread')
  assert.ok(await gone(sleepers[0]!.pid), 'and the tool with its launcher')
})

test('an idle launcher exits, and the next tool starts a new one', async () => {
  setLauncherIdleMs(200)
  try {
    await runTool('true', [], limits())
    const launcher = launcherOf(process.pid)!
    assert.ok(await gone(launcher.pid), 'it went after 200 ms idle')
    assert.equal((await runTool('sh', ['-c', 'printf again'], limits())).stdout.toString(), 'again')
    assert.notEqual(launcherOf(process.pid)?.pid, launcher.pid)
  } finally {
    setLauncherIdleMs(60_000)
  }
})
