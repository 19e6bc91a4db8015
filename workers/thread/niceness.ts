// Imported first by every worker entry, so the thread is niced before it does anything: job work yields to
// the main thread, so /health and intake stay quick when every core is busy. On Linux, nice is per thread,
// and inherited by the threads and processes a thread starts: this thread's ffmpeg children get it from
// here. libvips is different: sharp runs its pipelines on libuv's thread pool, which the whole process
// shares and whichever thread needs it first starts (usually the main thread, at nice 0), and libvips
// starts its own threads from there. So the pool's threads get this nice too, once they exist.
import { readdirSync, readFileSync } from 'node:fs'
import { access } from 'node:fs/promises'
import { setPriority } from 'node:os'
import { workerData } from 'piscina'
import type { WorkerData } from '../../contract/types.ts'

const { niceness } = workerData as WorkerData
if (niceness > 0) {
  setPriority(niceness)
  if (process.platform === 'linux') {
    await access(import.meta.dirname) // one trip through the pool: it exists after this
    for (const tid of readdirSync('/proc/self/task')) {
      // Raising nice needs no privilege. A thread that ended since the listing (an idle pool or libvips
      // thread) is no loss, and must not fail this thread's start.
      try {
        if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'libuv-worker') setPriority(Number(tid), niceness)
      } catch {}
    }
  }
}
