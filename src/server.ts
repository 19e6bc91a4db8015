// The only file that listens: read config, build the app, listen, and drain gracefully on SIGTERM/SIGINT.
// It starts the product only; the comparison shapes (cluster, server threads) live in load/shapes/.
import './v8-flags.ts'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, applyRuntimeDefaults, loadConfig, type Config } from './config.ts'
import { metricsServer } from './plugins/metrics.ts'

let config: Config
try {
  config = loadConfig()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`thumbd: invalid config: ${err.message}`)
  process.exit(1)
}
applyRuntimeDefaults(config)

const app = await buildApp(config)
// METRICS_PORT: /metrics on a listener of its own (and not on PORT), so that it can be closed off at the network.
const metrics = config.metricsPort === 0 ? undefined : metricsServer(app.metrics)
// Past the grace period and the cleanup margin, close-with-grace exits 1 rather than hang.
closeWithGrace({ delay: config.shutdownGraceMs + 10_000, logger: app.log }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
  app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'draining')
  const drained = await app.drain(config.shutdownGraceMs)
  if (!drained) app.log.warn('grace period over: cancelling the jobs still running')
  await app.close()
  await metrics?.close()
  app.log.info('closed')
})
await app.listen({ port: config.port, host: config.host })
if (metrics !== undefined) {
  const address = await metrics.listen({ port: config.metricsPort, host: config.metricsHost })
  app.log.info(`metrics listening at ${address}/metrics`)
}
// Whether signed GET URLs are served, so that a 403 on /i/... after editing .env points at a missed restart.
app.log.info(config.urlSigning.length > 0
  ? `GET URLs (/i/...) are on: ${config.urlSigning.length} signing key(s) from URL_SIGNING_KEYS`
  : `GET URLs (/i/...) are off: URL_SIGNING_KEYS is not set${config.allowUnsignedUrls ? ' (only "insecure" ones are served: ALLOW_UNSIGNED_URLS)' : ''}`)
// Logged once so that `npm start` works out of the box (DESIGN.md); a warning, as a deployment must set API_KEYS.
if (config.apiKeyGenerated) app.log.warn(`API_KEYS is not set: this run accepts the generated key ${config.apiKeys[0]} (for development: set API_KEYS for any other use)`)
