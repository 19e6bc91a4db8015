// `npm run mutate-guards`: mutation testing of the guards around every ffmpeg/ffprobe input
// (workers/video/ffmpeg-args.ts, guardedInput, and the input it is given, workers/video/video-input.ts). Each mutant is
// a copy of this tree with one guard removed or turned off; test/hostile/hostile.test.ts runs against it,
// and should fail. Slow (a hostile run per mutant
// and setting), so it is not part of `npm test`.
//
// Each mutant runs twice: as built, and with the decoder sandbox's file rule opened to all of / (the tools
// may read anything, as on a host without Landlock). As built, the sandbox may stop what a removed guard
// let through: then only the second run shows whether the corpus tests the guard itself.
// Exit 1 if a mutant that some input could exploit survives with the file sandbox open, or if an edit no
// longer applies (guardedInput, videoInput or the sandbox's call sites changed: update the lists below).
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TEST = 'test/hostile/hostile.test.ts'
/** Not copied: the dependencies are linked instead, and the rest is large or irrelevant to a test run. */
const SKIP = new Set(['node_modules', '.git', 'load/results', 'load/.media'])

/** [file, original text (or a pattern of it), its replacement]. */
type Edit = [string, string | RegExp, string]

interface Mutation {
  name: string
  edits: Edit[]
  /** Why no input can tell this mutant apart (then surviving is expected, and reported as such). */
  equivalent?: string
}

const ARGS = 'workers/video/ffmpeg-args.ts'
/** Where a spooled input gets its "file:" prefix and its protocols (guardedInput takes them from there). */
const INPUT = 'workers/video/video-input.ts'
const MUTATIONS: Mutation[] = [
  { name: 'no -protocol_whitelist', edits: [[ARGS, "'-protocol_whitelist', input.protocols, ", '']], equivalent: 'an input opened as "file:" already limits nested opens to ffmpeg\'s default "file,crypto,data", and under a forced demuxer with data references off nothing opens anything' },
  { name: 'no forced demuxer (-f): ffmpeg probes', edits: [[ARGS, "'-f', demuxer, '-i'", "'-i'"]] },
  { name: 'no -enable_drefs 0 / -use_absolute_path 0', edits: [[ARGS, "['-enable_drefs', '0', '-use_absolute_path', '0']", '[]']], equivalent: 'both are ffmpeg\'s defaults (made explicit in guardedInput)' },
  { name: '-enable_drefs 1 (data references followed)', edits: [[ARGS, "'-enable_drefs', '0'", "'-enable_drefs', '1'"]] },
  { name: '-use_absolute_path 1', edits: [[ARGS, "'-use_absolute_path', '0'", "'-use_absolute_path', '1'"]], equivalent: 'with data references off, no reference is opened, absolute or not' },
  { name: '-enable_drefs 1 -use_absolute_path 1', edits: [[ARGS, "'-enable_drefs', '0', '-use_absolute_path', '0'", "'-enable_drefs', '1', '-use_absolute_path', '1'"]] },
  { name: 'no "file:" before the path', edits: [[INPUT, /`file:\$\{ref\.path\}`/, 'ref.path']], equivalent: 'thumbd names every input itself (a UUID in its temp folder), so no path can read as another protocol' },
  { name: 'the file input may open any protocol', edits: [[INPUT, "protocols: 'file', reads", "protocols: 'file,http,https,tcp,tls,crypto,data,subfile,concat', reads"]], equivalent: 'under a forced demuxer with data references off, the input opens no other resource, whatever the whitelist allows' },
  { name: 'no guard at all', edits: [[ARGS, /\['-protocol_whitelist', input\.protocols, \.\.\.protocolOptions, \.\.\.demuxerOptions, '-f', demuxer, '-i', input\.url\]/, "['-i', input.url]"]] }
]

/** The decoder may read all of / besides its input: both ways a tool starts (the wrapper, the zygote) get it. */
const FILE_SANDBOX_OPEN: Edit[] = [
  ['workers/tools/run-tool.ts', 'execChain(bin, args, sandbox, reads, connectPort)', "execChain(bin, args, sandbox, [...reads, '/'], connectPort)"],
  ['workers/tools/run-tool.ts', 'launchInZygote(sandbox.zygote, bin, args, sandbox, reads, connectPort)', "launchInZygote(sandbox.zygote, bin, args, sandbox, [...reads, '/'], connectPort)"]
]

/** A copy of the tree with node_modules linked, `edits` applied. */
function mutant (edits: Edit[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-mutant-'))
  cpSync(ROOT, dir, { recursive: true, filter: source => !SKIP.has(relative(ROOT, source)) })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  for (const [file, from, to] of edits) {
    const text = readFileSync(join(dir, file), 'utf8')
    if (typeof from === 'string' ? !text.includes(from) : !from.test(text)) {
      rmSync(dir, { recursive: true, force: true })
      throw new Error(`${file} has no ${from}: it changed, update scripts/mutate-guards.ts`)
    }
    writeFileSync(join(dir, file), text.replace(from, to))
  }
  return dir
}

/** Runs the hostile test in `dir`: whether it failed, and the first assertion that did. */
function hostileRun (dir: string): { failed: boolean, why: string } {
  const run = spawnSync(process.execPath, ['--test', '--test-timeout=120000', '--test-reporter=tap', TEST], { cwd: dir, encoding: 'utf8', timeout: 600_000 })
  // TAP puts a failure's message after "error:", on the same line or (as a block, "|-") on the next.
  const lines = run.stdout.split('\n')
  const at = lines.findIndex(line => /^\s+error: /.test(line))
  const inline = at < 0 ? '' : lines[at]!.replace(/^\s+error: /, '')
  const why = at < 0 ? run.stderr.trim().split('\n')[0] ?? '' : /^[|>]-?$/.test(inline) ? lines[at + 1]!.trim() : inline.replace(/^'|'$/g, '')
  return { failed: run.status !== 0, why: why.slice(0, 160) }
}

function check (edits: Edit[]) {
  const dir = mutant(edits)
  try {
    return hostileRun(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const SETTINGS = [['as built', []], ['file sandbox open', FILE_SANDBOX_OPEN]] as const
for (const [setting, edits] of SETTINGS) {
  const control = check([...edits])
  if (control.failed) {
    console.error(`the hostile test fails on an unmutated copy (${setting}), so no mutant can be judged: ${control.why}`)
    process.exit(1)
  }
}
console.log(`unmutated copies (${SETTINGS.map(([setting]) => setting).join(', ')}): ${TEST} passes`)

let survivors = 0
for (const { name, edits, equivalent } of MUTATIONS) {
  const [built, open] = SETTINGS.map(([, sandboxEdits]) => check([...edits, ...sandboxEdits]))
  const verdict = (r: { failed: boolean }) => r.failed ? 'CAUGHT  ' : 'survived'
  console.log(`${verdict(built!)} as built | ${verdict(open!)} file sandbox open | ${name}`)
  for (const [setting, r] of [['as built', built!], ['file sandbox open', open!]] as const) if (r.failed) console.log(`    ${setting}: ${r.why}`)
  if (!open!.failed && equivalent !== undefined) console.log(`    expected to survive: ${equivalent}`)
  else if (!open!.failed) {
    survivors++
    console.log('    no corpus case needs this guard')
  } else if (!built!.failed) console.log('    as built, the decoder sandbox stops what this guard stops: the corpus shows it only with the sandbox open')
}
console.log(survivors === 0 ? 'every guard that an input could get past is caught by the corpus' : `${survivors} guard(s) no test would miss`)
process.exit(survivors === 0 ? 0 : 1)
