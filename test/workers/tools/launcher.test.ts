// Tools start through a launcher process per thread; they must behave as if spawned here, and nothing may
// outlive the thread, the launcher or the job.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { processTree } from '../../../load/sampler.ts'
import { gone, waitFor } from '../../faults/helpers.ts'
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

/**
 * This thread's launcher and its `sleep 30`, once both run (polled: the launcher starts the tool when it gets to
 * it). Only once the chain has exec'd `sleep` itself: before that, setpriv may not have set the parent-death signal yet.
 */
async function runningSleeper (): Promise<{ launcher: number, sleeper: number }> {
  let found: { launcher: number, sleeper: number } | undefined
  await waitFor(() => {
    const launcher = launcherOf(process.pid)
    const sleeper = launcher === undefined ? undefined : children(launcher.pid).find(c => c.cmdline.startsWith('sleep 30'))
    found = sleeper === undefined ? undefined : { launcher: launcher!.pid, sleeper: sleeper.pid }
    return found !== undefined
  }, 5000, 'sleep 30 to run under the launcher')
  return found!
}

/** A launcher other than `old` serves this thread now (and there is one at all). */
function assertNewLauncher (old: number) {
  const current = launcherOf(process.pid)
  assert.ok(current !== undefined, 'a launcher runs')
  assert.notEqual(current.pid, old, 'a new one')
}

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
  const { sleeper } = await runningSleeper()
  abort.abort(new Error('cancelled'))
  await assert.rejects(running, /cancelled/)
  assert.ok(await gone(sleeper))
})

test('a launcher that dies fails its running tools, kills them, and the next tool gets a new launcher', async () => {
  const running = runTool('sleep', ['30'], limits())
  const { launcher, sleeper } = await runningSleeper()
  process.kill(launcher, 'SIGKILL')
  await assert.rejects(running, { code: 'INTERNAL' })
  assert.ok(await gone(sleeper), 'the tool died with its launcher (parent-death signal)')
  const next = await runTool('sh', ['-c', 'printf ok'], limits())
  assert.equal(next.stdout.toString(), 'ok')
  assertNewLauncher(launcher)
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
  const launchers = () => children(process.pid).filter(c => c.cmdline.includes('launcher-process.ts'))
  const sleepersOf = () => launchers().flatMap(l => children(l.pid)).filter(c => c.cmdline.startsWith('sleep 30'))
  await waitFor(() => sleepersOf().length > 0, 5000, 'the thread\'s tool to run')
  const sleepers = sleepersOf()
  assert.equal(sleepers.length, 1, 'the thread\'s tool is running')
  const launcher = launchers().find(l => children(l.pid).some(c => c.pid === sleepers[0]!.pid))!
  await worker.terminate()
  assert.ok(await gone(launcher.pid), 'the launcher died with its thread')
  assert.ok(await gone(sleepers[0]!.pid), 'and the tool with its launcher')
})

test('an idle launcher exits, and the next tool starts a new one', async () => {
  setLauncherIdleMs(200)
  try {
    await runTool('true', [], limits())
    const launcher = launcherOf(process.pid)
    assert.ok(launcher !== undefined, 'the tool ran under a launcher')
    assert.ok(await gone(launcher.pid), 'it went after 200 ms idle')
    const again = runTool('sh', ['-c', 'sleep 1; printf again'], limits())
    await waitFor(() => launcherOf(process.pid) !== undefined, 3000, 'a launcher for the next tool')
    assertNewLauncher(launcher.pid)
    assert.equal((await again).stdout.toString(), 'again')
  } finally {
    setLauncherIdleMs(60_000)
  }
})
