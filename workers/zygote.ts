// Runs ffmpeg/ffprobe as forks of a zygote: the tool itself, loaded once with native/ffmpeg-zygote.so and
// serving requests (see that file). Debian's ffmpeg spends ~60 ms of CPU linking its ~215 libraries before
// main(); a fork of the zygote starts at main(). Used when the .so is built (npm ci builds it where a C
// compiler is present) and FFMPEG_ZYGOTE is not off; else the tools start through the Node launcher.
import { launchWith, withParentDeath, type HelperSpec, type LaunchedTool } from './launcher.ts'
import type { Sandbox } from './types.ts'

export const ZYGOTE_FILE = new URL('../native/ffmpeg-zygote.so', import.meta.url).pathname

/**
 * A zygote's children share its address-space layout, so what one hostile input could learn of it would
 * hold for the next: a fresh zygote (new layout, ~60 ms) takes over after this many runs.
 */
let runsPerZygote = 64

type Zygote = NonNullable<Sandbox['zygote']>

/** `env` with the zygote library preloaded ahead of what it preloads already (an allocator, say), which stays for the tools too. */
export function preloadingZygote (library: string, env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, LD_PRELOAD: [library, env.LD_PRELOAD].filter(Boolean).join(' ') }
}

export function launchInZygote (zygote: Zygote, bin: string, args: string[], sandbox: Sandbox): LaunchedTool {
  return launchWith(`zygote ${bin}`, () => zygoteSpec(zygote, bin, sandbox), [bin, ...args])
}

function zygoteSpec ({ library }: Zygote, bin: string, { setpriv, addressSpaceBytes, cpuSeconds, env }: Sandbox): HelperSpec {
  return {
    name: `${bin} zygote`,
    command: withParentDeath(setpriv, [bin]),
    env: {
      ...preloadingZygote(library, env),
      THUMBD_ZYGOTE: bin,
      // What the tools get back as LD_PRELOAD.
      THUMBD_ZYGOTE_PRELOAD: env.LD_PRELOAD ?? '',
      // The limits prlimit gives the tools the Node launcher starts; the zygote sets them on each child.
      THUMBD_ZYGOTE_AS: String(addressSpaceBytes),
      THUMBD_ZYGOTE_CPU: String(cpuSeconds)
    },
    maxRuns: runsPerZygote
  }
}

/** Test-only: how many runs before a zygote is replaced. */
export function setRunsPerZygote (runs: number) { runsPerZygote = runs }
