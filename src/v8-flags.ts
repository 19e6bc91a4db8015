// Imported first by server.ts, so every launcher (npm start, the image, the bench) runs with it and
// `node src/server.ts` needs no flags.
// V8 runs a full mark-compact of the main heap for about every 64 MB of external memory (the memory under
// Buffers) allocated since the last one, however small the JS heap. Every upload arrives as socket-sized
// Buffers, and a refused one still brings its first 64 KB, so under load that was 75-100 mark-compacts per
// 10 s on the main thread: a third of its busy time, and its longest pauses (--trace-gc, --cpu-prof). With
// this flag V8 counts external memory into the heap's global limit instead, which grows with the load:
// 3-27 per 10 s in the same runs. Set at run time it takes effect (the same counts as on the command line),
// and here it is set before the app allocates anything.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--external-memory-accounted-in-global-limit')
// That global limit is recomputed after each mark-compact from what is live (a ~25 MB heap and the few
// Buffers in flight) times V8's growing factor, so a 100 MB upload still ran one mark-compact every ~80 ms:
// 117-157 per 10 s, mutator utilisation 0.66, and V8's helper thread marking for a third of a core
// (--trace-gc, perf). A factor of 4 (1 + 300/100) lets ~4x as much garbage collect between them:
// 13-15 per 10 s; 100 MB hashes at 2 connections 7.1-9.4 -> 11.1-13.0/s. It costs peak RSS: the 15 MP
// photo at 8 connections with jemalloc 506-527 -> 560-581 MB (200 gave 537-545 MB but only 10.1-10.6/s).
setFlagsFromString('--heap-growing-percent=300')
