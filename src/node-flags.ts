// Node options that cannot be set at run time (unlike V8's, see v8-flags.ts), so every launcher passes them
// on the command line. A module of its own, without side effects, so launchers can import it.
/**
 * Passed by `npm start`, the Dockerfile's CMD, the bench and load harness (test/ops/deploy.test.ts keeps them equal).
 * `--v8-pool-size=1`: one V8 platform thread (GC helpers) instead of four. On 2 busy cores the extra
 * helpers only contended with the job threads: video over HTTP at 4 connections 7.26 -> 7.51/s (mean of
 * 8 alternating runs each), images unchanged, /health p99 under 200 connections no worse (6-7 ms).
 */
export const SERVER_NODE_FLAGS = ['--v8-pool-size=1'] as const
