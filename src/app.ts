// The app is a plugin: plugins first (each one concern), then routes. server.ts listens; tests build
// the same app with buildApp() and talk to it with inject().
import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import underPressure from '@fastify/under-pressure'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { unsafeSettings, type Config } from './config.ts'
import { errors } from './errors.ts'
import { optionsError } from './routes/options-error.ts'
import admission from './plugins/admission.ts'
import auth from './plugins/auth.ts'
import batch from './plugins/batch.ts'
import digests from './plugins/digests.ts'
import docs from './plugins/docs.ts'
import errorHandler from './plugins/error-handler.ts'
import jobs from './plugins/jobs.ts'
import lifecycle from './plugins/lifecycle.ts'
import mediaTools from './plugins/media-tools.ts'
import metrics from './plugins/metrics.ts'
import resultStore from './result-store/plugin.ts'
import slowClients, { serverTimeouts } from './plugins/slow-clients.ts'
import sources from './plugins/sources.ts'
import tempFiles from './plugins/temp-files.ts'
import hashRoutes from './routes/hash.ts'
import healthRoutes from './routes/health.ts'
import infoRoutes from './routes/info.ts'
import jobsRoutes from './routes/jobs.ts'
import resizeRoutes from './routes/resize.ts'
import signedUrlRoutes from './routes/signed-url.ts'
import storyboardRoutes from './routes/storyboard.ts'
import previewRoutes from './routes/preview.ts'
import thumbnailRoutes from './routes/thumbnail.ts'

export function serverOptions (config: Config, logStream?: Writable): FastifyServerOptions {
  return {
    logger: {
      level: config.logLevel,
      ...(logStream === undefined ? {} : { stream: logStream }),
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' }
    },
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
    // Unknown options are an error (400), not silently dropped.
    // verbose: errors carry the failing schema and value, so a refusal can say what the option accepts.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, verbose: true } },
    schemaErrorFormatter: optionsError,
    // JSON bodies carry options and a URL only; media bodies are streamed and bounded by MAX_SOURCE_BYTES.
    bodyLimit: 64 * 1024,
    // A signed GET URL carries its source in the path (routes/signed-url.ts caps it).
    routerOptions: { maxParamLength: 8400 },
    // lifecycle.ts answers 503 DRAINING itself, with a catalogue code.
    return503OnClosing: false,
    ...serverTimeouts(config)
  }
}

export interface AppOptions {
  config: Config
  /** Tests only: another pool entry file (see plugins/jobs.ts). Never set by server.ts. */
  workerFile?: string
}

export async function app (fastify: FastifyInstance, { config, workerFile }: AppOptions) {
  for (const warning of unsafeSettings(config)) fastify.log.warn(warning)
  await fastify.register(errorHandler)
  // Before any route: swagger collects them as they are added.
  await fastify.register(docs)
  await fastify.register(metrics, { serve: config.metricsPort === 0 ? 'api' : 'own-listener' })
  await fastify.register(lifecycle)
  await fastify.register(admission, { config })
  await fastify.register(tempFiles, { config })
  await fastify.register(mediaTools, { config })
  await fastify.register(jobs, { config, workerFile })
  await fastify.register(digests, { config })
  await fastify.register(slowClients, { config })
  await fastify.register(sources, { config })
  await fastify.register(auth, { config })
  await fastify.register(resultStore, { config })
  await fastify.register(batch, { config })

  await fastify.register(healthRoutes)
  // Job routes: bearer key, drain gate, admission and the body's pacing before any byte of the body is read.
  await fastify.register(async (api) => {
    api.addHook('onRequest', api.authenticate)
    await jobGates(api, config)
    api.addHook('onRequest', api.paceBody)
    api.addHook('preParsing', api.continueBody)
    await api.register(thumbnailRoutes)
    await api.register(resizeRoutes)
    await api.register(hashRoutes)
    await api.register(infoRoutes)
    await api.register(storyboardRoutes)
    await api.register(previewRoutes)
    await api.register(jobsRoutes)
  }, { prefix: '/api' })
  // Signed GET URLs: the signature is the credential; the same gates, and no body.
  await fastify.register(async (signed) => {
    await jobGates(signed, config)
    await signed.register(signedUrlRoutes, { config })
  })
}

/** The guard's reading is the mean event-loop delay over its last sample interval (under-pressure's default). */
const PRESSURE_SAMPLE_MS = 1000

/** What every route that runs jobs passes first: the drain gate, admission, and the event-loop and memory guard. */
async function jobGates (scope: FastifyInstance, config: Config) {
  scope.addHook('onRequest', scope.admitWhileRunning)
  scope.addHook('onRequest', scope.admission.admit)
  // Until a sample has been taken wholly after the server could take requests, the reading may be its own
  // start-up's stall (1-2 s of loading and starting threads on a busy machine), over by then: /health said
  // ready, and the first requests got 503 for up to a second (scripts/warm-compile-cache.ts, as the Docker build
  // runs it, failed so beside stress-ng).
  let startedAt = performance.now()
  const started = async () => { startedAt = performance.now() }
  scope.addHook('onReady', started)
  scope.addHook('onListen', started)
  // Event-loop delay and memory guard the job routes only; /health and /metrics keep answering.
  await scope.register(underPressure, {
    maxEventLoopDelay: config.pressureMaxEventLoopDelayMs,
    maxRssBytes: config.pressureMaxRssBytes,
    sampleInterval: PRESSURE_SAMPLE_MS,
    pressureHandler: async (_request: FastifyRequest, _reply: FastifyReply, type: string) => {
      if (type === underPressure.TYPE_EVENT_LOOP_DELAY && performance.now() - startedAt < 2 * PRESSURE_SAMPLE_MS) return
      scope.metrics.shed.inc({ reason: type === underPressure.TYPE_EVENT_LOOP_DELAY ? 'event_loop_delay' : 'memory' })
      throw new errors.Overloaded()
    }
  })
}

export interface BuildOptions {
  /** Where logs go instead of stdout (tests read them). */
  logStream?: Writable
  workerFile?: string
}

export async function buildApp (config: Config, { logStream, workerFile }: BuildOptions = {}): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(config, logStream)).withTypeProvider<TypeBoxTypeProvider>()
  await fastify.register(fp(app), { config, workerFile })
  await fastify.ready()
  return fastify
}
