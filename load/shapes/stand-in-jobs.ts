// The product's main thread with a stand-in pool (load/shapes/stand-in-worker.ts) that answers each job at once
// with what the real job answered the first time it was asked. This 2-core machine cannot run enough real
// thumbnails to keep one event loop busy, and a main thread that wakes for 80 photos a second pays, per photo,
// for waking cold (caches, scheduling) what a busy one shares: this shape measures the main thread at the
// rates a host with many more cores would ask of it (`node load/main-thread.ts --stand-in`). For measuring only.
// First, as src/server.ts imports it: the product's V8 flags, or the main thread measured is not the product's.
import '../../src/v8-flags.ts'
import { buildApp } from '../../src/app.ts'
import { applyRuntimeDefaults, loadConfig } from '../../src/config.ts'

const config = loadConfig()
applyRuntimeDefaults(config)
const app = await buildApp(config, { workerFile: new URL('./stand-in-worker.ts', import.meta.url).href })
const stop = async () => {
  await app.close()
  process.exit(0)
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
await app.listen({ port: config.port, host: config.host })
