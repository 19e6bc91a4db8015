// Every error reply has one shape, { statusCode, code, error, message }, with a code from src/errors.ts.
// 5xx details go to the log, never to the client. A request no route takes says what would take it: 405 with
// Allow when the path is known under another method, else 404 pointing to /docs.
import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { codeOf, errors, ThumbdError } from '../errors.ts'
import { HOW_TO_SEND } from './sources.ts'
import { knownRoutes } from './known-routes.ts'

/** Seconds a client should wait before retrying a 503. */
const RETRY_AFTER_SECONDS = 1

export default fp(async (app) => {
  app.setErrorHandler((err: FastifyError & { retryAfter?: number }, request, reply) => {
    // The client left: nobody reads this reply, and it is not a server error. Its own work was cancelled with
    // it; work it shared (signed GET URLs) says in its error what became of it.
    if (request.clientGone?.aborted === true) {
      request.log.info(err === request.clientGone.reason ? 'client disconnected; its work was cancelled' : `client disconnected: ${err.message}`)
      return reply.code(499).send()
    }
    const error = normalise(err, request, app.initialConfig.bodyLimit)
    if (codeOf(error) === 'INTERNAL') request.log.error({ err }, 'request failed')
    else request.log.info({ code: error.code, reason: err.message }, 'request refused')
    if (error.statusCode === 503) reply.header('retry-after', String(err.retryAfter ?? RETRY_AFTER_SECONDS))
    // RFC 9110 11.6.1: a 401 names the scheme it wants; the message says what was wrong with what came.
    if (error.statusCode === 401) reply.header('www-authenticate', 'Bearer realm="thumbd"')
    // A refusal sent before the body was read: plugins/slow-clients.ts reads and drops the rest, bounded.
    return reply.code(error.statusCode).send({
      statusCode: error.statusCode,
      code: error.code,
      error: STATUS_CODES[error.statusCode],
      message: error.statusCode === 500 ? 'Internal error' : error.message
    })
  })

  const routes = knownRoutes(app)
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!
    const allowed = routes.methodsOf(path)
    const error = allowed.length > 0
      ? new errors.MethodNotAllowed(`${request.method} ${path}: this route takes ${allowed.join(', ')} (see /docs)`)
      : new errors.NotFound(`${request.method} ${path}`)
    if (allowed.length > 0) reply.header('allow', allowed.join(', '))
    return reply.code(error.statusCode).send({ statusCode: error.statusCode, code: error.code, error: STATUS_CODES[error.statusCode], message: error.message })
  })
}, { name: 'error-handler' })

/** Fastify's own errors (validation, content type, body size) mapped onto the catalogue, saying what to do instead. */
function normalise (err: FastifyError, request: FastifyRequest, jsonLimit = 0): ThumbdError {
  if (err instanceof ThumbdError) return err
  if (err.validation !== undefined) return new errors.BadOptions(err.message)
  // Only JSON bodies are parsed whole (media bodies stream into the spool): this is never the source.
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new errors.PayloadTooLarge(`the JSON body is over ${jsonLimit} bytes: JSON carries only a URL and options; send the media itself as the request body (Content-Type image/*, video/*, audio/* or application/octet-stream) or a multipart "file" part`)
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new errors.UnsupportedMedia(unsupportedType(request.headers['content-type']))
  switch (err.statusCode) {
    case 400: return new errors.BadOptions(err.message)
    case 401: return new errors.Unauthorized(err.message)
    case 413: return new errors.PayloadTooLarge(err.message)
    case 415: return new errors.UnsupportedMedia(err.message)
    default:
      // Other client errors from plugins (multipart framing, ...) are the request's fault, not ours.
      return err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? new errors.BadOptions(err.message) : new errors.Internal()
  }
}

/** A body of a type no route takes; curl's -d and --data-binary send form-urlencoded unless told otherwise. */
function unsupportedType (type: string | undefined): string {
  const curl = type?.startsWith('application/x-www-form-urlencoded') === true ? ' (curl --data-binary sends this type unless given -H \'Content-Type: ...\')' : ''
  return `Content-Type ${type ?? '(none)'} is not taken${curl}: ${HOW_TO_SEND}`
}
