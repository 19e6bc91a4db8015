// Intake of job sources. Raw uploads are taken as a stream (the content-type parser only passes the
// stream on), so options are validated and admission decided before a single body byte is read.
import { finished } from 'node:stream'
import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { spool, type SpooledSource } from '../sources/spool.ts'

declare module 'fastify' {
  interface FastifyRequest {
    spooled: SpooledSource | null
  }
  interface FastifyInstance {
    sources: {
      /** The request's source, spooled; removed from disk when the reply ends, whatever happened. */
      take (request: FastifyRequest, reply: FastifyReply): Promise<SpooledSource>
    }
  }
}

/** Content types taken as raw media bodies; what they really are is sniffed, never trusted. */
export const RAW_MEDIA_TYPES = /^(?:image\/[\w.+-]+|video\/[\w.+-]+|application\/octet-stream)$/i

export default fp<{ config: Config }>(async (app, { config }) => {
  app.addContentTypeParser(RAW_MEDIA_TYPES, (_request, payload, done) => done(null, payload))

  app.decorateRequest('spooled', null)
  // The temp file goes before the reply does, so a client never sees its answer while the file remains.
  app.addHook('onSend', async (request) => {
    await request.spooled?.dispose()
  })

  async function take (request: FastifyRequest, reply: FastifyReply): Promise<SpooledSource> {
    const declared = Number(request.headers['content-length'])
    if (declared > config.maxSourceBytes) throw new errors.PayloadTooLarge(`more than ${config.maxSourceBytes} bytes`)
    const body = request.body as Readable | undefined
    if (body === undefined || typeof body.pipe !== 'function') throw new errors.UnsupportedMedia('send the media as the request body')
    const source = await spool(body, {
      maxBytes: config.maxSourceBytes,
      memoryBytes: config.memorySpoolBytes,
      tempDir: app.tempDir
    })
    request.spooled = source
    // For replies that never reach onSend (the client left first).
    finished(reply.raw, () => {
      source.dispose().catch(err => request.log.error({ err }, 'could not remove a temp file'))
    })
    return source
  }

  app.decorate('sources', { take })
}, { name: 'sources', dependencies: ['temp-files'] })
