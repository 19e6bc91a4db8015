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
