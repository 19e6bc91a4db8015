// Runs ffmpeg/ffprobe as forks of a zygote: the tool itself, loaded once with native/ffmpeg-zygote.so and
// serving requests (see that file). Debian's ffmpeg spends ~60 ms of CPU linking its ~215 libraries before
// main(); a fork of the zygote starts at main(). Used when the .so is built (npm ci builds it where a C
// compiler is present) and FFMPEG_ZYGOTE is not off; else the tools start through the Node launcher.
import { launchWith, type HelperSpec, type LaunchedTool } from './launcher.ts'
import { withParentDeath, zygoteEnv, zygoteRun } from './sandbox.ts'
import type { Sandbox } from '../../contract/types.ts'

/**
 * A zygote's children share its address-space layout, so what one hostile input could learn of it would
 * hold for the next: a fresh zygote (new layout, ~60 ms) takes over after this many runs.
 */
let runsPerZygote = 64

type Zygote = NonNullable<Sandbox['zygote']>

/** `reads`: the only files the forked tool may open (its input); `connectPort`: the only TCP port it may connect to. */
export function launchInZygote (zygote: Zygote, bin: string, args: string[], sandbox: Sandbox, reads: readonly string[] = [], connectPort?: number): LaunchedTool {
  return launchWith(`zygote ${bin}`, () => zygoteSpec(zygote, bin, sandbox), zygoteRun(reads, [bin, ...args], connectPort))
}

function zygoteSpec ({ library }: Zygote, bin: string, sandbox: Sandbox): HelperSpec {
  return { name: `${bin} zygote`, command: withParentDeath(sandbox.setpriv, [bin]), env: zygoteEnv(library, bin, sandbox), maxRuns: runsPerZygote }
}

/** Test-only: how many runs before a zygote is replaced. */
export function setRunsPerZygote (runs: number) { runsPerZygote = runs }
