// The only file that listens: read config, build the app, listen, and drain gracefully on SIGTERM/SIGINT.
// With CLUSTER_WORKERS or SERVER_THREADS (shapes kept for measuring, see README "Benchmarks") this file is
// also what each forked process or server thread runs.
import './v8-flags.ts'
import cluster from 'node:cluster'
import { isMainThread, parentPort } from 'node:worker_threads'
import closeWithGrace from 'close-with-grace'
import type { FastifyListenOptions } from 'fastify'
import { buildApp } from './app.ts'
import { ConfigError, applyRuntimeDefaults, loadConfig, type Config } from './config.ts'
import { runCluster } from './shapes/cluster.ts'
import { SHUTDOWN_MESSAGE, runServerThreads } from './shapes/server-threads.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`thumbd: invalid config: ${err.message}`)
  process.exit(1)
}
applyRuntimeDefaults(config)

if (config.clusterWorkers > 0 && cluster.isPrimary) await runCluster(config)
else if (config.serverThreads > 0 && isMainThread) await runServerThreads(config)
else await serve(config)

async function serve (config: Config) {
  const app = await buildApp(config)
  const shutDown = async (reason: Record<string, unknown>) => {
    app.log.info({ ...reason, graceMs: config.shutdownGraceMs }, 'draining')
    const drained = await app.drain(config.shutdownGraceMs)
    if (!drained) app.log.warn('grace period over: cancelling the jobs still running')
    await app.close()
    app.log.info('closed')
  }
  if (isMainThread) {
    // Past the grace period and the cleanup margin, close-with-grace exits 1 rather than hang.
    closeWithGrace({ delay: config.shutdownGraceMs + 10_000, logger: app.log }, async ({ signal, err }) => {
      if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
      await shutDown({ signal })
    })
  } else {
    // Server threads get no signals: their primary posts the shutdown.
    parentPort?.once('message', message => {
      if (message === SHUTDOWN_MESSAGE) shutDown({ signal: 'from primary' }).then(() => process.exit(0), () => process.exit(1))
    })
  }
  // Fastify hands these options to net's server.listen(), which knows reusePort (Fastify's type does not yet).
  const listenOptions: FastifyListenOptions & { reusePort?: boolean } = { port: config.port, host: config.host, reusePort: config.serverThreads > 0 }
  await app.listen(listenOptions)
  if (config.apiKeyGenerated) {
    app.log.info(`API_KEYS is not set: this run accepts the generated key ${config.apiKeys[0]}`)
  }
}
