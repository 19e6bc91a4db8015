// The embedded queue's database, on a thread of its own: PGlite runs PostgreSQL as WebAssembly, synchronously, and
// on the main thread its first start (initdb, ~7 s here) and every query would stall the event loop that serves
// requests. Here it answers pg-boss's statements (through pg-boss's own PGlite adapter) by message.
import { mkdir } from 'node:fs/promises'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'

interface Statement { id: number, text: string, values?: unknown[] }

const { dataDir, niceness } = workerData as { dataDir: string, niceness: number }
// Niced as the pool's threads are (WORKER_NICENESS): its first start is seconds of CPU, which on a busy host must
// not take the event loop's core (the loop lagging past PRESSURE_MAX_EVENT_LOOP_DELAY_MS answers requests 503).
if (niceness > 0) setPriority(niceness)
const { PGlite } = await import('@electric-sql/pglite')
const { fromPglite } = await import('pg-boss')
await mkdir(dataDir, { recursive: true })
const defaults = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams
// Small buffers: PostgreSQL's defaults (128 MB shared_buffers) cost 250 MB of RSS; a queue of small rows needs none.
const pglite = await PGlite.create(dataDir, {
  startParams: [...defaults, '-c', 'shared_buffers=2MB', '-c', 'work_mem=1MB', '-c', 'temp_buffers=1MB', '-c', 'wal_buffers=64kB']
})
const db = fromPglite(pglite)
const port = parentPort!
port.on('message', (message: Statement | 'close') => {
  if (message === 'close') {
    pglite.close().finally(() => port.close())
    return
  }
  db.executeSql(message.text, message.values).then(
    ({ rows }) => port.postMessage({ id: message.id, rows }),
    (err: Error & { code?: string }) => port.postMessage({ id: message.id, error: { message: err.message, code: err.code } })
  )
})
port.postMessage('ready')
