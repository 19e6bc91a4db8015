// A loopback origin for the range-read tests and `npm run bench:ranges`: serves files with Range support (206,
// Content-Range, ETag) as a static file server does, and counts the body bytes it sends; from a given request
// on it can misbehave the ways a hostile or broken server does.
import { once } from 'node:events'
import { createReadStream } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'

/** A file by its bytes, or a file on disk (a multi-GB one is streamed, never held). */
export type OriginFile = Buffer | { path: string, size: number }

const PIECE_BYTES = 64 * 1024

/** Bytes start-end (inclusive) of the file, a piece at a time. */
function piecesOf (file: OriginFile, start: number, end: number): Readable {
  if (!Buffer.isBuffer(file)) return createReadStream(file.path, { start, end, highWaterMark: PIECE_BYTES })
  return Readable.from((function * () {
    for (let at = start; at <= end; at += PIECE_BYTES) yield file.subarray(at, Math.min(at + PIECE_BYTES, end + 1))
  })())
}

export type Misbehaviour =
  | 'ignore-range' // 200 and the whole file, always
  | 'other-size' // a Content-Range whose total differs
  | 'other-range' // a Content-Range for bytes other than those asked
  | 'other-bytes' // the range asked, filled with other bytes
  | 'drip' // one byte a second
  | 'redirect' // 302 to `redirectTo`
  | 'changed' // the file changed: 200 with the whole file to an If-Range that no longer holds
  | 'capped' // an open range answered with 64 KiB at most (some servers cap what one answer carries)
  | 'no-ranges' // 416 to any Range, 200 without one

export interface OriginOptions {
  misbehave?: Misbehaviour
  /** Requests answered properly before the misbehaviour starts (the first one makes the source remote). */
  after?: number
  redirectTo?: string
}

export async function startOrigin (files: Record<string, OriginFile>, { misbehave, after = 1, redirectTo }: OriginOptions = {}) {
  let requests = 0
  let sent = 0
  const ranges: string[] = []
  const server = createServer((request, response) => {
    const file = files[(request.url ?? '').slice(1)]
    if (file === undefined) return response.writeHead(404).end()
    const size = Buffer.isBuffer(file) ? file.length : file.size
    const wrong = misbehave !== undefined && requests++ >= after
    ranges.push(request.headers.range ?? '')
    const send = (status: number, headers: Record<string, string | number>, start: number, end: number) => {
      response.writeHead(status, { 'content-length': end - start + 1, etag: '"v1"', 'accept-ranges': 'bytes', ...headers })
      if (wrong && misbehave === 'drip') return drip(response, end - start + 1)
      const body = wrong && misbehave === 'other-bytes' ? Readable.from([Buffer.alloc(end - start + 1, 0x5a)]) : piecesOf(file, start, end)
      // What the socket took counts as sent (the kernel's buffers included: a client that stops reading still cost the origin those).
      body.on('data', (piece: Buffer) => { sent += piece.length })
      body.pipe(response)
      response.on('close', () => body.destroy())
    }
    const match = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '')
    if (match === null || (wrong && (misbehave === 'ignore-range' || misbehave === 'changed'))) return send(200, {}, 0, size - 1)
    if (wrong && misbehave === 'redirect') return response.writeHead(302, { location: redirectTo ?? '/' }).end()
    if (wrong && misbehave === 'no-ranges') return response.writeHead(416, { 'content-range': `bytes */${size}` }).end()
    const start = Number(match[1])
    const asked = Math.min(match[2] === '' ? size - 1 : Number(match[2]), size - 1)
    const end = wrong && misbehave === 'capped' ? Math.min(asked, start + 64 * 1024 - 1) : asked
    if (start >= size) return response.writeHead(416, { 'content-range': `bytes */${size}` }).end()
    const shown = wrong && misbehave === 'other-size'
      ? `bytes ${start}-${end}/${size + 1000}`
      : wrong && misbehave === 'other-range' ? `bytes ${start + 1}-${end + 1}/${size}` : `bytes ${start}-${end}/${size}`
    send(206, { 'content-range': shown }, start, end)
  })
  // The body of a drip: a byte a second (zeros), until the client gives up.
  function drip (response: ServerResponse, length: number) {
    let at = 0
    const timer = setInterval(() => {
      if (at++ >= length || response.destroyed) return clearInterval(timer)
      sent++
      response.write(Buffer.alloc(1))
    }, 1000)
    response.on('close', () => clearInterval(timer))
  }
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    /** Body bytes sent so far. */
    sent: () => sent,
    /** The Range header of each request ('' for none). */
    ranges: () => [...ranges],
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  }
}
