// Clients that send slowly, or not at all, and clients that send everything before they read:
// - headers must arrive within HEADERS_TIMEOUT_MS, a whole request within REQUEST_TIMEOUT_MS, and an idle
//   keep-alive connection goes after KEEP_ALIVE_TIMEOUT_MS (serverTimeouts, given to Fastify);
// - a job request's body must keep a floor of MIN_BODY_BYTES_PER_SECOND over every window, or it is
//   answered 408 and its connection closed: a phone on a bad network and a drip attack look the same, and
//   either holds a connection and a buffer, never job capacity (admission reserves only submitted jobs);
// - `Expect: 100-continue` is honoured: 100 goes out only once the request passed auth and admission, so a
//   refused client never sends its body;
// - an answer sent before the body was read (a refusal) lingers: the rest of the body is read and dropped,
//   up to LINGER_BYTES and LINGER_MS, so that a client that reads only after sending (Python's http.client,
//   requests) sees its 503 instead of a reset. Past either bound the connection is cut. All lingering bodies
//   together are read at LINGER_BYTES_PER_SECOND at most: under a flood of refused uploads from clients that
//   send the next at once, reading and dropping them as fast as they come took the main thread and the
//   loopback (~350 MB/s, /health p99 in the hundreds of ms); over the budget a socket is paused, so TCP
//   backpressure makes its client wait, as a full queue should, and LINGER_MS waits out that pause too (up
//   to LINGER_MAX_MS). A reply that closes its connection (the client asked, HTTP/1.0, Fastify's own body
//   parser errors) half-closes it and lingers the same way: Node's close would reset a client still sending.
// Hand-written: Node's own timeouts cover headers and idle sockets but have no rate floor, and its close after
// an early answer resets clients that are still sending.
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'

/** The rate floor is checked over windows this long. */
export const BODY_WINDOW_MS = 5000
/** How much of a refused body is read and dropped, and for how long, before the connection is cut. */
export const LINGER_BYTES = 16 * 2 ** 20
export const LINGER_MS = 5000
/** LINGER_MS grows by the budget's pauses (the server's own wait, not the client's), up to this. */
export const LINGER_MAX_MS = 30_000
/** What all lingering bodies together may be read at, after a burst of LINGER_BURST_BYTES. */
export const LINGER_BYTES_PER_SECOND = 64 * 2 ** 20
const LINGER_BURST_BYTES = 32 * 2 ** 20

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborts (with 408 REQUEST_TIMEOUT) when the body falls below the rate floor. */
    bodyTooSlow: AbortSignal
  }
  interface FastifyInstance {
    /** onRequest hook for job routes: watches the body's rate. */
    paceBody (request: FastifyRequest, reply: FastifyReply): Promise<void>
    /** preParsing hook for job routes: the request was admitted, so the client may send its body now. */
    continueBody (request: FastifyRequest, reply: FastifyReply): Promise<void>
  }
}

/** Fastify's options for the http server it creates (its type leaves `http` to its HTTP/1-only overload). */
export function serverTimeouts (config: Config): Partial<FastifyServerOptions> & { http: ServerOptions } {
  return {
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node checks its header and request timeouts on this interval (30 s by default).
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    clientErrorHandler
  }
}

/** Node's errors before a request exists (timeouts, malformed requests): a catalogue reply, then close. */
function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket) {
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
  if (socket.writable && !socket.writableEnded && err.code !== 'ECONNRESET') {
    const error = timedOut ? new errors.RequestTimeout('the request headers did not arrive in time') : new errors.BadOptions('malformed HTTP request')
    const body = JSON.stringify({ statusCode: error.statusCode, code: error.code, error: STATUS_CODES[error.statusCode], message: error.message })
    socket.end(`HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroySoon()
}

/** A token bucket: `take` spends bytes and says how long to wait until the budget is back above zero. */
function byteBudget (bytesPerSecond: number, burstBytes: number) {
  let tokens = burstBytes
  let filledAt = performance.now()
  return {
    take (bytes: number): number {
      const now = performance.now()
      tokens = Math.min(burstBytes, tokens + (now - filledAt) * bytesPerSecond / 1000) - bytes
      filledAt = now
      return tokens >= 0 ? 0 : Math.ceil(-tokens * 1000 / bytesPerSecond)
    }
  }
}

/**
 * Per socket, the request whose reply may half-close it (with pipelining, the last one to ask), and whether
 * Node did close it after that reply.
 */
const halfCloses = new WeakMap<Socket, { request: IncomingMessage, closing: boolean }>()

/**
 * For one request's reply: when Node closes the connection after it (Connection: close), it calls destroySoon(),
 * which destroys the socket with the client's body unread, and the kernel answers the client's next bytes with a
 * reset that also discards the reply. Only the write side is ended instead; that request's linger destroys the
 * socket once the body is read or its bounds are hit.
 */
function halfCloseInstead (request: IncomingMessage, socket: Socket) {
  const halfClose = { request, closing: false }
  halfCloses.set(socket, halfClose)
  socket.destroySoon = function (this: Socket) {
    halfClose.closing = true
    this.end()
  }
}

/** Whether `request`'s reply half-closed its socket; the socket is Node's own again after this. */
function takeHalfClose (request: IncomingMessage, socket: Socket): boolean {
  const halfClose = halfCloses.get(socket)
  if (halfClose?.request !== request) return false
  halfCloses.delete(socket)
  Reflect.deleteProperty(socket, 'destroySoon')
  return halfClose.closing
}

export default fp<{ config: Config }>(async (app, { config }) => {
  const lingerBudget = byteBudget(LINGER_BYTES_PER_SECOND, LINGER_BURST_BYTES)
  /** Each linger's way back to a plain LINGER_MS deadline, so that closing the server waits LINGER_MS at most. */
  const lingering = new Set<() => void>()
  let shuttingDown = false
  app.addHook('preClose', async () => {
    shuttingDown = true
    for (const hurry of lingering) hurry()
  })
  const floorPerWindow = config.minBodyBytesPerSecond * BODY_WINDOW_MS / 1000
  app.decorateRequest('bodyTooSlow', null as unknown as AbortSignal)

  // Without a listener Node answers 100 at once; with this one the route's hooks decide (continueBody).
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => app.server.emit('request', request, response))

  app.decorate('paceBody', async (request: FastifyRequest, reply: FastifyReply) => {
    const controller = new AbortController()
    request.bodyTooSlow = controller.signal
    const { socket } = request.raw
    if (floorPerWindow === 0 || !(socket instanceof Socket) || request.raw.complete) return
    let seen = socket.bytesRead
    const timer = setInterval(() => {
      if (request.raw.complete) return clearInterval(timer)
      const arrived = socket.bytesRead - seen
      seen = socket.bytesRead
      if (arrived >= floorPerWindow) return
      clearInterval(timer)
      controller.abort(new errors.RequestTimeout(`the body arrived slower than ${config.minBodyBytesPerSecond} bytes/s`))
    }, BODY_WINDOW_MS).unref()
    finished(reply.raw, () => clearInterval(timer))
  })

  app.decorate('continueBody', async (request: FastifyRequest, reply: FastifyReply) => {
    if (/^100-continue$/i.test(request.headers.expect ?? '') && !reply.raw.headersSent) reply.raw.writeContinue()
  })

  // A reply about to go out before its request's body was read: the body is claimed (read(0)) so that Node does
  // not dump it, and the linger counts it as 'data' of the request. A dumped body emits no 'data', and counting it
  // on the socket instead took that socket off Node's native HTTP parsing for good ("unconsume"): every later
  // body on the kept-alive connection, admitted ones too, went through JS stream events (/health p99 under a
  // flood of refusals 14.7 -> 10.5 ms pooled over 9 alternating pairs, the 200-connection phase of `npm run bench`).
  app.addHook('onSend', async (request, _reply, payload) => {
    const { raw } = request
    if (!raw.complete && !raw.destroyed) {
      raw.read(0)
      if (raw.socket instanceof Socket) halfCloseInstead(raw, raw.socket)
    }
    return payload
  })

  // An answer that went out before its request's body was read: read and drop the rest, within bounds.
  app.addHook('onResponse', async (request) => {
    const { raw } = request
    const { socket } = raw
    if (!(socket instanceof Socket)) return
    // Node has made its call on this reply's connection by now ('finish' ran its own listener first).
    const closing = takeHalfClose(raw, socket)
    const close = () => { if (closing) socket.destroySoon() }
    if (raw.complete || socket.destroyed) return close()
    const cut = () => socket.destroy()
    const started = performance.now()
    let deadline = started + LINGER_MS
    // Shutting down, app.close() waits for every linger: the budget's pauses no longer extend it.
    let extending = !shuttingDown
    const atDeadline = () => {
      const leftMs = deadline - performance.now()
      if (leftMs <= 0) return cut()
      timer = setTimeout(atDeadline, leftMs).unref()
    }
    let timer = setTimeout(atDeadline, LINGER_MS).unref()
    const hurry = () => {
      extending = false
      deadline = Math.min(deadline, performance.now() + LINGER_MS)
      clearTimeout(timer)
      atDeadline()
    }
    let read = 0
    let waiting: NodeJS.Timeout | undefined
    const dropping = (chunk: Buffer) => {
      read += chunk.length
      if (read > LINGER_BYTES) return cut()
      const waitMs = lingerBudget.take(chunk.length)
      if (waitMs === 0 || waiting !== undefined) return
      // Paused, the body fills its buffer and Node stops reading the socket: TCP backpressure. The client is
      // waiting for the server here, so the deadline moves too: else a flood cuts every linger at once.
      if (extending) deadline = Math.min(started + LINGER_MAX_MS, deadline + waitMs)
      raw.pause()
      waiting = setTimeout(() => {
        waiting = undefined
        raw.resume()
      }, waitMs).unref()
    }
    lingering.add(hurry)
    // A pause still running is left to end: the connection's next request waits out its share too.
    const done = () => {
      lingering.delete(hurry)
      clearTimeout(timer)
      raw.off('data', dropping)
      raw.off('end', done)
      socket.off('close', done)
      close()
    }
    raw.once('end', done)
    socket.once('close', done)
    // A consumer that stopped part way may still hold it: a multipart parser piped from it (pausing it when its
    // part goes unread), or an iterator's 'readable' listener (spool.ts refusing after the first bytes), with
    // which 'data' would not flow.
    raw.removeAllListeners('readable')
    raw.unpipe()
    raw.on('data', dropping)
    raw.resume()
  })
}, { name: 'slow-clients' })
