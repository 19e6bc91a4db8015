// The one definition of the sandbox around a tool run (contract/types.ts Sandbox holds its settings), and
// the forms each way of starting a tool takes it in: an exec chain of util-linux tools for the Node launcher,
// the environment the zygote reads for the children it forks, and the parent-death wrapper of the helpers.
// A limit is added here, once, and every form carries it.
import { fileURLToPath } from 'node:url'
import type { Sandbox } from '../../contract/types.ts'

/** Built by npm ci where a C compiler is present (scripts/build-zygote.sh). */
export const ZYGOTE_FILE = fileURLToPath(new URL('../../native/ffmpeg-zygote.so', import.meta.url))

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
 * The command line that execs the tool in place under the limits: prlimit caps address space and CPU time
 * and forbids writing any file, setpriv has the kernel SIGKILL the tool should its parent die. Tools that
 * are absent on this host (util-linux missing) are skipped; media-tools.ts warns at start.
 */
export function execChain (bin: string, args: string[], sandbox: Sandbox): string[] {
  const limits = limitsOf(sandbox)
  let command = withParentDeath(sandbox.setpriv, [bin, ...args])
  if (sandbox.prlimit !== undefined) {
    command = [sandbox.prlimit, `--as=${limits.addressSpaceBytes}`, `--cpu=${limits.cpuSeconds}`, `--fsize=${limits.fileSizeBytes}`, `--core=${limits.coreBytes}`, '--', ...command]
  }
  return command
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
 * The zygote's environment: it serves when THUMBD_ZYGOTE names its argv[0], and applies the limits to each
 * child it forks (native/ffmpeg-zygote.c reads these, then removes them so the tool never sees them).
 */
export function zygoteEnv (library: string, bin: string, sandbox: Sandbox): Record<string, string> {
  const limits = limitsOf(sandbox)
  return {
    ...preloadingZygote(library, sandbox.env),
    THUMBD_ZYGOTE: bin,
    // What the tools get back as LD_PRELOAD.
    THUMBD_ZYGOTE_PRELOAD: sandbox.env.LD_PRELOAD ?? '',
    THUMBD_ZYGOTE_AS: String(limits.addressSpaceBytes),
    THUMBD_ZYGOTE_CPU: String(limits.cpuSeconds)
  }
}
