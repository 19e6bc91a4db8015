// ffmpeg/ffprobe forked from a zygote (native/ffmpeg-zygote.c, workers/tools/zygote.ts) must give what the tool
// run afresh gives, under the same limits, and nothing may outlive the thread, the zygote or the job.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { processStat, processTree } from '../../../load/sampler.ts'
import type { FastifyInstance } from 'fastify'
import { decoderProcesses, environNames, gone, procText, waitFor } from '../../faults/helpers.ts'
import { frameArgs, probeArgs } from '../../../workers/video/ffmpeg-args.ts'
import { colourPath } from '../../../workers/video/stream-colour.ts'
import { videoInput } from '../../../workers/video/video-input.ts'
import { TOOL_MARKER } from '../../../workers/tools/index.ts'
import { runTool, type ToolLimits } from '../../../workers/tools/run-tool.ts'
import type { Sandbox } from '../../../contract/types.ts'
import { ZYGOTE_FILE } from '../../../workers/tools/sandbox.ts'
import { setRunsPerZygote } from '../../../workers/tools/zygote.ts'
import { build, postMedia } from '../../helper.ts'
import { media, mediaPath } from '../../media.ts'

const run = promisify(execFile)
const SANDBOX: Sandbox = { prlimit: 'prlimit', setpriv: 'setpriv', env: { PATH: process.env.PATH! }, zygote: { library: ZYGOTE_FILE }, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }
/** A forked tool is in the decoder sandbox: it may read the files it is given (`reads`) and nothing else. */
const limits = (signal = new AbortController().signal, reads: string[] = []): ToolLimits => ({ signal, maxStdoutBytes: 1 << 26, children: new SharedArrayBuffer(4), sandbox: SANDBOX, reads, anyExitCode: true })
/** An ffmpeg that runs until it is stopped (30 s of generated frames, read in real time). */
const LONG_RUN = ['-hide_banner', '-nostdin', '-re', '-f', 'lavfi', '-i', 'testsrc=d=30:s=64x64', '-f', 'null', '-']

const live = (pid: number) => processTree(pid).filter(p => p.ppid === pid && p.state !== 'Z')
const zygotes = () => live(process.pid).filter(p => p.comm === 'ffmpeg-zygote')

/** The fork has become the tool once its seccomp filter is on: the last step, after its name, descriptors and limits. */
const becameTool = (pid: number) => /^Seccomp:\s+[12]$/m.test(procText(pid, 'status'))

async function runningChild (): Promise<{ zygote: number, pid: number }> {
  const until = Date.now() + 3000
  while (Date.now() < until) {
    for (const zygote of zygotes()) {
      const [child] = live(zygote.pid)
      // Found between fork and the tool's start, it was still named ffmpeg-zygote (failed CI once).
      if (child !== undefined && becameTool(child.pid)) return { zygote: zygote.pid, pid: child.pid }
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error('no tool running under a zygote')
}

test('the zygote library is built (npm ci builds it with the C compiler that .ci/run installs)', () => {
  assert.ok(existsSync(ZYGOTE_FILE), `${ZYGOTE_FILE} is missing: run sh scripts/build-zygote.sh`)
})

test('frames and probes forked from the zygote are what the tools run afresh give, also two at once', async () => {
  const video = await mediaPath('mp4-h264')
  const args = frameArgs({ input: videoInput({ location: 'file', path: video }), demuxer: 'mov', seekSeconds: 1, bestOf: 0, threads: 1, maxPixels: 50_000_000, maxStreams: 32, report: false, coverBox: { width: 640 }, colour: colourPath({ width: 1920, height: 1080 }) })
  const fresh = await run('ffmpeg', args, { encoding: 'buffer', maxBuffer: 1 << 26 })
  const [a, b] = await Promise.all([runTool('ffmpeg', args, limits(undefined, [video])), runTool('ffmpeg', args, limits(undefined, [video]))])
  for (const forked of [a, b]) {
    assert.equal(forked.code, 0)
    assert.ok(forked.stdout.length > 100_000)
    assert.ok(forked.stdout.equals(fresh.stdout), 'the same PPM, byte for byte')
  }
  const probe = await runTool('ffprobe', probeArgs(videoInput({ location: 'file', path: video }), 'mov'), limits(undefined, [video]))
  assert.deepEqual(JSON.parse(probe.stdout.toString()), JSON.parse((await run('ffprobe', probeArgs(videoInput({ location: 'file', path: video }), 'mov'))).stdout))
  assert.ok(live(process.pid).some(p => p.comm === 'ffprobe-zygote'))

  const refused = await runTool('ffmpeg', ['-hide_banner', '-i', '/nonexistent.mp4'], limits())
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /No such file or directory/)
})

test('each forked run gets the sandbox: the limits, its own name, /dev/null for stdin and no other descriptor', async () => {
  const abort = new AbortController()
  const running = runTool('ffmpeg', LONG_RUN, limits(abort.signal))
  const { pid } = await runningChild()
  assert.equal(processStat(pid)?.comm, 'ffmpeg')
  const limitsText = readFileSync(`/proc/${pid}/limits`, 'utf8')
  assert.match(limitsText, /^Max cpu time\s+10\s+10\s/m)
  assert.match(limitsText, /^Max file size\s+0\s+0\s/m)
  assert.match(limitsText, /^Max core file size\s+0\s+0\s/m)
  assert.match(limitsText, new RegExp(`^Max address space\\s+${4 * 2 ** 30}\\s+${4 * 2 ** 30}\\s`, 'm'))
  assert.equal(readlinkSync(`/proc/${pid}/fd/0`), '/dev/null')
  assert.deepEqual(readdirSync(`/proc/${pid}/fd`).sort(), ['0', '1', '2'], 'none of the zygote\'s descriptors (its requests, other runs\' pipes)')
  abort.abort(new Error('cancelled'))
  await assert.rejects(running, /cancelled/)
  assert.ok(await gone(pid), 'a cancelled run is killed')
})

test('a forked run sees the environment it is given, as it would have without the zygote', async () => {
  // /proc/<pid>/environ shows the block the zygote was started with, so a shell (any glibc program can be a
  // zygote) prints the environment its fork really has: with its builtin, as the sandbox lets it start nothing.
  process.env.THUMBD_TEST_SECRET = 'not for the tools'
  const { stdout } = await runTool('sh', ['-c', 'export -p'], limits())
  delete process.env.THUMBD_TEST_SECRET
  // dash's "export NAME='value'" -> NAME=value
  const environ = stdout.toString().split('\n').map(line => line.replace(/^export ([^=]+)='(.*)'$/, '$1=$2'))
  assert.ok(environ.includes(`PATH=${process.env.PATH}`), 'the sandbox\'s environment')
  assert.ok(!environ.some(v => v.startsWith('THUMBD_TEST_SECRET')), 'and nothing else of this process\'s')
  assert.deepEqual(environ.filter(v => v.startsWith('THUMBD_ZYGOTE')), [], 'no zygote settings are left for the tool')
  assert.ok(!environ.some(v => v.startsWith('LD_PRELOAD=') && v.includes('ffmpeg-zygote')))
})

test('a zygote that dies fails its running tools, kills them, and the next run gets a new zygote', async () => {
  const running = runTool('ffmpeg', LONG_RUN, limits())
  const { zygote, pid } = await runningChild()
  process.kill(zygote, 'SIGKILL')
  await assert.rejects(running, { code: 'INTERNAL' })
  assert.ok(await gone(pid), 'the tool died with its zygote (parent-death signal)')
  const next = await runTool('ffmpeg', ['-hide_banner', '-version'], limits())
  assert.match(next.stdout.toString(), /^ffmpeg version/)
  assert.ok(zygotes().every(z => z.pid !== zygote))
})

test('after its quota of runs a zygote gives way to a fresh one, with a new address layout', async () => {
  const libavcodecAt = (pid: number) => readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').find(line => line.includes('libavcodec'))?.split('-')[0]
  setRunsPerZygote(2)
  try {
    // A zygote made by the tests above keeps the quota it was made with.
    for (const earlier of zygotes()) {
      process.kill(earlier.pid, 'SIGKILL')
      // Reaped, not only dead: this thread has then seen it exit, and will not send it the next run.
      await waitFor(() => processStat(earlier.pid) === undefined, 3000, 'the zygote to be reaped')
    }
    const version = () => runTool('ffmpeg', ['-hide_banner', '-version'], limits())
    await version()
    const [first] = zygotes()
    assert.ok(first !== undefined)
    const firstLayout = libavcodecAt(first.pid)
    await version()
    assert.ok(await gone(first.pid), 'it exits after its last run')
    await version()
    const [second] = zygotes()
    assert.ok(second !== undefined && second.pid !== first.pid)
    assert.notEqual(libavcodecAt(second.pid), firstLayout)
  } finally {
    setRunsPerZygote(64)
  }
})

test('terminating the thread kills its zygote and the tools forked from it', async () => {
  const worker = new Worker(new URL('data:text/javascript,' + encodeURIComponent(`
    import { workerData, parentPort } from 'node:worker_threads'
    const { runTool } = await import(workerData.spawn)
    runTool('ffmpeg', workerData.args, { signal: new AbortController().signal, maxStdoutBytes: 1024, children: new SharedArrayBuffer(4), sandbox: workerData.sandbox }).catch(() => {})
    parentPort.postMessage('started')
    setInterval(() => {}, 1000)
  `)), { workerData: { spawn: new URL('../../../workers/tools/run-tool.ts', import.meta.url).href, sandbox: SANDBOX, args: LONG_RUN } })
  await new Promise(resolve => worker.once('message', resolve))
  const { zygote, pid } = await runningChild()
  await worker.terminate()
  assert.ok(await gone(zygote), 'the zygote died with its thread')
  assert.ok(await gone(pid), 'and the tool with its zygote')
})

/** What the tools may see of the server's environment (Config.toolEnv), and the marker the server adds. */
const TOOL_ENV = ['PATH', 'LD_LIBRARY_PATH', 'LD_PRELOAD', TOOL_MARKER]

/** A real job's decoder, found by the server's marker while it runs, with its parent's name, command line and environment. */
async function decoderOfAJob (app: FastifyInstance) {
  const job = postMedia(app, 'thumbnail', await media('slow-seek'), 'video/mp4', '?at=8')
  await waitFor(() => decoderProcesses().length > 0, 10_000, 'the job\'s ffmpeg to run')
  const [tool] = decoderProcesses()
  const seen = {
    toolEnv: environNames(tool!.pid),
    parent: processStat(tool!.ppid)?.comm,
    parentCommand: procText(tool!.ppid, 'cmdline'),
    parentEnv: environNames(tool!.ppid)
  }
  assert.equal((await job).statusCode, 200)
  return seen
}

test('the server forks a real job\'s ffmpeg from its zygote, or starts it through the launcher with FFMPEG_ZYGOTE=off', async (t) => {
  const forked = await decoderOfAJob(await build(t))
  assert.equal(forked.parent, 'ffmpeg-zygote', 'the job\'s ffmpeg is a child of an ffmpeg zygote')
  assert.ok(forked.parentEnv.includes('THUMBD_ZYGOTE'), 'started to serve as one (THUMBD_ZYGOTE)')
  assert.deepEqual(forked.parentEnv.filter(name => !TOOL_ENV.includes(name) && !name.startsWith('THUMBD_ZYGOTE')), [], 'no more of the server\'s environment')

  const launched = await decoderOfAJob(await build(t, { FFMPEG_ZYGOTE: 'off' }))
  assert.match(launched.parentCommand, /launcher-process\.ts/, 'the job\'s ffmpeg is a child of the Node launcher')
  // Here /proc shows the tool's own environment (a zygote's fork shows the block the zygote started with).
  assert.deepEqual(launched.toolEnv.filter(name => !TOOL_ENV.includes(name)), [], 'no more of the server\'s environment')
  assert.ok(launched.toolEnv.includes(TOOL_MARKER))
})
