// The one definition of the sandbox around a tool run (contract/types.ts Sandbox holds its settings, and
// native/sandbox.c applies it), and the forms each way of starting a tool takes it in: the command line of
// native/thumbd-sandbox-exec for the Node launcher (util-linux's prlimit/setpriv where it is not built), the
// zygote's environment and run frame for the children it forks, and the parent-death wrapper of the helpers.
// A limit is added here, once, and every form carries it.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Sandbox } from '../../contract/types.ts'
import { encodeRunSandboxed, type RunRequest } from './launcher-protocol.ts'

/** Built by npm ci where a C compiler is present (scripts/build-zygote.sh). */
export const ZYGOTE_FILE = fileURLToPath(new URL('../../native/ffmpeg-zygote.so', import.meta.url))
export const SANDBOX_EXEC_FILE = fileURLToPath(new URL('../../native/thumbd-sandbox-exec', import.meta.url))
export const HEIF_DECODE_FILE = fileURLToPath(new URL('../../native/heif-decode', import.meta.url))
export const IMAGE_DECODE_FILE = fileURLToPath(new URL('../../native/image-decode', import.meta.url))

/**
 * The folder of the libvips sharp installed (node_modules/@img/sharp-libvips-<platform>/lib), which image-decode
 * links (its rpath, scripts/build-zygote.sh): a decoder started afresh loads it after entering the sandbox, so
 * it may read and map it. Forked from its zygote, it is mapped already.
 */
export const SHARP_LIBVIPS_DIR = (() => {
  const scope = fileURLToPath(new URL('../../node_modules/@img/', import.meta.url))
  try {
    const name = readdirSync(scope).find(entry => entry.startsWith('sharp-libvips-') && existsSync(join(scope, entry, 'lib')))
    return name === undefined ? undefined : join(scope, name, 'lib')
  } catch {
    return undefined
  }
})()

/** The tool dies with whoever started it (the thread, or its helper). */
const PARENT_DEATH_SIGNAL = 'KILL'

/** What every tool run is held to. */
export function limitsOf ({ addressSpaceBytes, cpuSeconds }: Sandbox) {
  return {
    addressSpaceBytes,
    cpuSeconds,
    /** No file is ever written: output goes to a pipe. */
    fileSizeBytes: 0,
    coreBytes: 0
  } as const
}

/**
 * The command line that execs the tool in place inside the sandbox, where it may read `reads` and nothing
 * else, and connect to `connectPort` (thumbd's range reader) and no other TCP port. Without thumbd-sandbox-exec: prlimit caps address space and CPU time and forbids writing any file,
 * setpriv has the kernel SIGKILL the tool should its parent die, and that is all (media-tools.ts says so at
 * start, and /health too). Tools absent on this host are skipped.
 */
export function execChain (bin: string, args: string[], sandbox: Sandbox, reads: readonly string[] = [], connectPort?: number): string[] {
  const limits = limitsOf(sandbox)
  if (sandbox.exec !== undefined) {
    const port = connectPort === undefined ? [] : ['--connect-port', String(connectPort)]
    const libraries = bin === IMAGE_DECODE_FILE && SHARP_LIBVIPS_DIR !== undefined ? ['--exec-read', SHARP_LIBVIPS_DIR] : []
    return [sandbox.exec, '--as', String(limits.addressSpaceBytes), '--cpu', String(limits.cpuSeconds), ...reads.flatMap(path => ['--read', path]), ...libraries, ...port, '--', bin, ...args]
  }
  // Only native/sandbox.c can confine a socket to one port: without it a tool gets no network at all to ask for.
  if (connectPort !== undefined) throw new Error('a TCP port for a tool needs native/thumbd-sandbox-exec')
  const limited = sandbox.prlimit === undefined
    ? [bin, ...args]
    : [sandbox.prlimit, `--as=${limits.addressSpaceBytes}`, `--cpu=${limits.cpuSeconds}`, `--fsize=${limits.fileSizeBytes}`, `--core=${limits.coreBytes}`, '--', bin, ...args]
  // setpriv goes first: the parent-death signal survives prlimit's exec, and the sooner it is set, the shorter
  // the window in which a parent's death (before it is set) leaves the tool orphaned. setpriv cannot close that
  // window as thumbd-sandbox-exec does (it checks its parent after setting the signal).
  return withParentDeath(sandbox.setpriv, limited)
}

/** The command, killed by the kernel when the thread that started it dies (setpriv, where present). */
export function withParentDeath (setpriv: string | undefined, command: string[]): string[] {
  return setpriv === undefined ? command : [setpriv, '--pdeathsig', PARENT_DEATH_SIGNAL, '--', ...command]
}

/** `env` with the zygote library preloaded ahead of what it preloads already (an allocator, say), which stays for the tools too. */
export function preloadingZygote (library: string, env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, LD_PRELOAD: [library, env.LD_PRELOAD].filter(Boolean).join(' ') }
}

/**
 * image-decode's malloc asks for transparent huge pages where the kernel gives them on request (THP "madvise", as
 * here), and grows its heap 64 MB at a time (virtual: only what is touched is memory): read by glibc once, at the
 * zygote's start, and inherited by every decoder it forks. A decoder lives for one picture, so each buffer it
 * allocates is fresh memory faulted in page by page, where the pool thread's sharp reuses its own. Huge pages alone
 * took a 3000x2000 AVIF's decode (aom's frame buffers) from 282-300 to 248-269 ms of CPU (the thread's own: 276), but
 * reached only buffers glibc maps apart; with the heap grown ahead as well, libvips' buffers of a GIF or PNG come from
 * huge pages too: a 1000x667 GIF thumbnail 8.5 -> 7.4 ms of CPU, page faults 1230 -> 444; a 6 MP PNG's 70.8 -> 69.1 ms
 * (decoders and their zygote, perf stat).
 */
const DECODER_MALLOC = 'glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864'

/**
 * The zygote's environment: it serves when THUMBD_ZYGOTE names its argv[0], and applies the limits to each
 * child it forks (native/ffmpeg-zygote.c reads these, then removes them so the tool never sees them).
 */
export function zygoteEnv (library: string, bin: string, sandbox: Sandbox): Record<string, string> {
  const limits = limitsOf(sandbox)
  return {
    ...preloadingZygote(library, sandbox.env),
    ...(bin === IMAGE_DECODE_FILE ? { GLIBC_TUNABLES: [sandbox.env.GLIBC_TUNABLES, DECODER_MALLOC].filter(Boolean).join(':') } : {}),
    THUMBD_ZYGOTE: bin,
    // What the tools get back as LD_PRELOAD.
    THUMBD_ZYGOTE_PRELOAD: sandbox.env.LD_PRELOAD ?? '',
    THUMBD_ZYGOTE_AS: String(limits.addressSpaceBytes),
    THUMBD_ZYGOTE_CPU: String(limits.cpuSeconds)
  }
}

/** The zygote's request for a run: the child enters the same sandbox (native/sandbox.c), may read `reads` only and connect to `connectPort` only. */
export function zygoteRun (reads: readonly string[], argv: string[], connectPort = 0): RunRequest {
  return id => encodeRunSandboxed(id, reads, argv, connectPort)
}
