// The app is a plugin: plugins first (each one concern), then routes. server.ts listens; tests build
// the same app with buildApp() and talk to it with inject().
import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.ts'
import auth from './plugins/auth.ts'
import errorHandler from './plugins/error-handler.ts'
import jobs from './plugins/jobs.ts'
import lifecycle from './plugins/lifecycle.ts'
import mediaTools from './plugins/media-tools.ts'
import sources from './plugins/sources.ts'
import tempFiles from './plugins/temp-files.ts'
import hashRoutes from './routes/hash.ts'
import healthRoutes from './routes/health.ts'
import resizeRoutes from './routes/resize.ts'
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
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
    // JSON bodies carry options and a URL only; media bodies are streamed and bounded by MAX_SOURCE_BYTES.
    bodyLimit: 64 * 1024,
    // lifecycle.ts answers 503 DRAINING itself, with a catalogue code.
    return503OnClosing: false
  }
}

export async function app (fastify: FastifyInstance, { config }: { config: Config }) {
  await fastify.register(errorHandler)
  await fastify.register(lifecycle)
  await fastify.register(tempFiles, { config })
  await fastify.register(mediaTools, { config })
  await fastify.register(jobs, { config })
  await fastify.register(sources, { config })
  await fastify.register(auth, { config })

  await fastify.register(healthRoutes)
  await fastify.register(async (api) => {
    api.addHook('onRequest', api.authenticate)
    api.addHook('onRequest', api.admitWhileRunning)
    await api.register(thumbnailRoutes)
    await api.register(resizeRoutes)
    await api.register(hashRoutes)
  }, { prefix: '/api' })
}

/** logStream: where logs go instead of stdout (tests read them). */
export async function buildApp (config: Config, logStream?: Writable): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(config, logStream)).withTypeProvider<TypeBoxTypeProvider>()
  await fastify.register(fp(app), { config })
  await fastify.ready()
  return fastify
}
