// What cannot be set at run time (unlike V8's flags, see v8-flags.ts): Node options, and the C library's
// allocator settings, read before any code runs. Every launcher passes them. A module of its own, without
// side effects, so launchers can import it.
/**
 * Passed by `npm start`, the Dockerfile's CMD, the bench and load harness (test/ops/deploy.test.ts keeps them equal).
 * `--v8-pool-size=1`: one V8 platform thread (GC helpers) instead of four. On 2 busy cores the extra
 * helpers only contended with the job threads: video over HTTP at 4 connections 7.26 -> 7.51/s (mean of
 * 8 alternating runs each), images unchanged, /health p99 under 200 connections no worse (6-7 ms).
 * `--max-semi-space-size=4` (MB): a young generation of 4 MB instead of up to 16. Under 200 connections of 1 MB
 * uploads the main thread's scavenges, forced by external memory, paused it for up to 26 ms; with it at
 * most 7.4 ms (`--trace-gc`, 12 s: 139 scavenges instead of 26, 359 ms in all instead of 281). /health p99
 * once saturated: 5.2-8.2 ms in 6 runs, against 5.6-14.0 ms (3 of 6 at 10 ms or more); video, 3 MP photos
 * and 100 MB hashes unchanged. It is not a run-time flag: the main heap is set up before any code runs.
 */
export const SERVER_NODE_FLAGS = ['--v8-pool-size=1', '--max-semi-space-size=4'] as const

/**
 * Set by `npm start` (unless already set), the Dockerfile's ENV, the bench and load harness (test/ops/deploy.test.ts
 * keeps them equal). One glibc malloc arena for the whole process instead of up to 8 per core: libvips'
 * threads then reuse each other's freed decode buffers instead of each keeping its own. 15 MP photos at 8
 * connections on 2 cores, fresh server: 9.2-9.5/s in 518-571 MB peak RSS, against 9.0-9.4/s in 690-813 MB
 * with glibc's default and 8.1-8.3/s in 563-606 MB with jemalloc, which handed decode buffers back to the
 * kernel and faulted them in again (~13,800 page faults per photo against ~1,500). Video, 3 MP photos,
 * 100 MB hashes and /health under 200 connections: no change. The price: memory freed after a burst stays
 * with the process (jemalloc gave it back).
 *
 * `TJ_OPTIMIZE=1`: libturbojpeg (workers/image/jpeg-direct.ts) optimises its Huffman tables, as sharp does, only when
 * this is in the environment, which it reads on every encode; set before the process starts, so no thread ever
 * writes the environment while another reads it. Without it JPEG thumbnails stay with sharp's encoder.
 */
export const SERVER_ENV = { GLIBC_TUNABLES: 'glibc.malloc.arena_max=1', TJ_OPTIMIZE: '1' } as const
