// Slow clients and clients that read only after sending, over real sockets: a drip holds no job capacity
// and is cut with 408, headers and idle sockets time out, and a refusal reaches a client that is still
// sending as its answer, not as a reset.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, constants, openSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { LINGER_BYTES, LINGER_BYTES_PER_SECOND, LINGER_MS } from '../../src/plugins/slow-clients.ts'
import { TEST_KEY, build } from '../helper.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'
import { listen, sleep, upload, waitFor } from './helpers.ts'

const portOf = (base: string) => Number(new URL(base).port)

function requestHead (path: string, length: number, extra: string[] = []) {
  return [`POST ${path} HTTP/1.1`, 'host: localhost', `authorization: Bearer ${TEST_KEY}`, 'content-type: image/jpeg', `content-length: ${length}`, ...extra, '', ''].join('\r\n')
}

interface RawClient { socket: Socket, reply: () => string, closed: Promise<string | undefined> }

/** A raw connection; `closed` resolves with the socket error's code, if any (EPIPE, ECONNRESET). */
async function rawClient (port: number): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let reply = ''
  socket.on('data', chunk => { reply += chunk.toString('latin1') })
  let error: string | undefined
  socket.on('error', (err: NodeJS.ErrnoException) => { error ??= err.code })
  const closed = new Promise<string | undefined>(resolve => socket.once('close', () => resolve(error)))
  return { socket, reply: () => reply, closed }
}

/**
 * Writes every part, at once (corked: one write as far as the server can tell, with no copy of large bodies),
 * before reading a byte of the answer, as Python's http.client does; the write's error code, if any.
 */
async function writeBeforeReading (client: RawClient, ...parts: Array<string | Buffer>): Promise<string | undefined> {
  client.socket.pause()
  client.socket.cork()
  for (const part of parts.slice(0, -1)) client.socket.write(part)
  const written = new Promise<string | undefined>(resolve => client.socket.write(parts.at(-1)!, err => resolve((err as NodeJS.ErrnoException | null)?.code)))
  client.socket.uncork()
  const writeError = await written
  client.socket.resume()
  return writeError
}

/** A whole request written before its answer is read: the answer's head, or the error that took its place. */
async function sendAllThenRead (port: number, head: string, body: Buffer): Promise<{ reply: string, error?: string }> {
  const client = await rawClient(port)
  const writeError = await writeBeforeReading(client, head, body)
  await waitFor(() => client.reply().includes('\r\n\r\n') || client.socket.destroyed, 10_000, 'an answer')
  client.socket.end()
  return { reply: client.reply(), error: writeError ?? await client.closed }
}

/**
 * Four uploads of a 64 MiB body sent at 12.8 MB/s each (far above INTAKE_BYTES_PER_SECOND) for as long as the test
 * needs, `video` first; `heads()` waits until the server has all four heads.
 */
async function fastUploads (t: TestContext, app: FastifyInstance, base: string, video: Buffer) {
  let heads = 0
  app.server.on('request', (request: { headers: Record<string, string | undefined> }) => { if (request.headers['content-length'] === String(64 * 2 ** 20)) heads++ })
  const chunk = Buffer.alloc(256 * 2 ** 10)
  const clients = await Promise.all(Array.from({ length: 4 }, () => rawClient(portOf(base))))
  for (const client of clients) client.socket.write(Buffer.concat([Buffer.from(requestHead('/api/thumbnail', 64 * 2 ** 20)), video, chunk]))
  const timer = setInterval(() => { for (const client of clients) if (client.socket.writableLength < chunk.length) client.socket.write(chunk) }, 20)
  const stop = () => clearInterval(timer)
  t.after(stop)
  return { clients, stop, heads: () => waitFor(() => heads === clients.length, 10_000, 'the fast uploads\' heads') }
}

/** A request behind queued work: refused with 503 OVERLOADED at its head, before its body. */
async function assertRefusedAtHead (base: string) {
  const behind = await rawClient(portOf(base))
  behind.socket.write(requestHead('/api/thumbnail', 1000) + 'x'.repeat(100))
  await waitFor(() => behind.reply().includes('\r\n\r\n'), 3000, 'an answer before the body')
  assert.match(behind.reply(), /^HTTP\/1\.1 503 [\s\S]*"code":"THUMBD_OVERLOADED"/, behind.reply())
  behind.socket.destroy()
}

test('drips below the rate floor hold no job capacity, and are cut with 408 and closed', async (t) => {
  // One thread and a short queue bound: before, twelve uploads in progress reserved 12 x 300 ms and every
  // other request got 503 for as long as they dripped.
  const app = await build(t, { POOL_THREADS: '1', MAX_QUEUE_WAIT_MS: '1000' })
  const base = await listen(app)
  const drips = await Promise.all(Array.from({ length: 12 }, () => rawClient(portOf(base))))
  for (const drip of drips) drip.socket.write(requestHead('/api/thumbnail', 5_000_000) + 'x'.repeat(100))
  const timer = setInterval(() => { for (const drip of drips) if (!drip.socket.destroyed) drip.socket.write('x') }, 1000)
  t.after(() => clearInterval(timer))
  const jpeg = await media('jpeg')
  for (let i = 0; i < 6; i++) {
    const res = await upload(base, 'thumbnail', jpeg)
    assert.equal(res.status, 200, `request ${i} beside the drips: ${res.body.toString()}`)
  }
  const errors = await Promise.all(drips.map(drip => drip.closed))
  for (const [i, drip] of drips.entries()) {
    assert.match(drip.reply(), /^HTTP\/1\.1 408 /, `drip ${i} (${errors[i]}): ${drip.reply()}`)
    assert.match(drip.reply(), /"code":"THUMBD_REQUEST_TIMEOUT"/)
  }
})

test('uploads that come fast count as queued work for MAX_QUEUE_WAIT_MS: a request behind them is refused at its head, before its body', async (t) => {
  // One thread and a 1 s bound: four thumbnails (300 ms each, before any has run) fill it. Before, nothing
  // was queued until a job was submitted: every upload that started at once was admitted and taken in whole
  // (200 clients of 12 MB: 2.4 GB through the main thread), only to be refused at submission.
  const app = await build(t, { POOL_THREADS: '1', MAX_QUEUE_WAIT_MS: '1000' })
  const base = await listen(app)
  const { clients: fast, stop, heads } = await fastUploads(t, app, base, await media('mp4-h264'))
  // Once the server has their heads (a fixed 300 ms was not enough beside stress-ng: some came 100 ms before the
  // request behind them, the first 1.06 s before it, past MAX_QUEUE_WAIT_MS, where it counts no more), and a
  // few of INTAKE_TICK_MS's rate checks.
  await heads()
  await sleep(200)
  await assertRefusedAtHead(base)
  // Still coming past MAX_QUEUE_WAIT_MS, they are no jobs a moment from now: they refuse no one any more (else a
  // few long fast uploads would refuse everyone else for minutes).
  await sleep(1000)
  assert.ok(fast.every(client => !client.socket.destroyed && !client.reply().includes('\r\n\r\n')), 'the fast uploads are still coming')
  const later = await upload(base, 'thumbnail', await media('jpeg'))
  assert.equal(later.status, 200, later.body.toString())
  // Uploads that are gone hold nothing.
  stop()
  for (const client of fast) client.socket.destroy()
  await sleep(100)
  const res = await upload(base, 'thumbnail', await media('jpeg'))
  assert.equal(res.status, 200, res.body.toString())
})

test('uploads the server itself holds paused (their temp file cannot open yet) still count as queued work', async (t) => {
  // Every libuv thread held (a FIFO's open waits for its writer), so the videos' temp files cannot open and the
  // server stops reading their sockets after 128 KiB, as its niced libuv threads left it beside stress-ng. Judged
  // by what the server read, they looked slow after a few hundred ms and the request behind them was admitted.
  const app = await build(t, { POOL_THREADS: '1', MAX_QUEUE_WAIT_MS: '1000' })
  const base = await listen(app)
  // Read before every libuv thread is held below (a file read needs one).
  const video = await media('mp4-h264')
  const dir = tempFolder('thumbd-held-', t)
  const fifos = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, (_, i) => join(dir, `fifo-${i}`))
  for (const fifo of fifos) execFileSync('mkfifo', [fifo])
  const held = fifos.map(fifo => open(fifo, 'r'))
  const release = async () => {
    // Each writer opened from this thread, without blocking it: ENXIO until its reader's open is waiting.
    const writers: number[] = []
    for (const fifo of fifos) {
      for (;;) {
        try {
          writers.push(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
          break
        } catch { await sleep(10) }
      }
    }
    for (const handle of await Promise.all(held)) await handle.close()
    for (const fd of writers) closeSync(fd)
  }
  const { clients: fast, heads } = await fastUploads(t, app, base, video)
  try {
    await heads()
    // Past the point where 128 KiB over the time since its head falls below INTAKE_BYTES_PER_SECOND (0.5 s).
    await sleep(700)
    await assertRefusedAtHead(base)
  } finally {
    for (const client of fast) client.socket.destroy()
    await release()
  }
})

test('headers must arrive in HEADERS_TIMEOUT_MS: an idle socket and half a request are closed, the latter with 408', async (t) => {
  const app = await build(t, { HEADERS_TIMEOUT_MS: '1000' })
  const base = await listen(app)
  const idle = await rawClient(portOf(base))
  const half = await rawClient(portOf(base))
  half.socket.write('POST /api/thumbnail HTTP/1.1\r\nhost: localhost\r\n')
  const started = Date.now()
  await Promise.all([idle.closed, half.closed])
  assert.ok(Date.now() - started < 5000, 'closed within the timeout and one check interval')
  assert.match(half.reply(), /^HTTP\/1\.1 408 [\s\S]*"code":"THUMBD_REQUEST_TIMEOUT"/)
})

test('a refusal reaches a client that sends its whole body before reading, as its 503, not as a reset', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  // Every job request is now refused in onRequest, before its body is read.
  app.drain(60_000).catch(() => {})
  const body = Buffer.alloc(12 * 2 ** 20)
  for (let i = 0; i < 3; i++) {
    const { reply, error } = await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', body.length), body)
    assert.match(reply, /^HTTP\/1\.1 503 [\s\S]*retry-after: \d+[\s\S]*"code":"THUMBD_DRAINING"/i, `try ${i}: ${error ?? ''} ${reply}`)
  }
})

test('a refusal that closes its connection still reaches a client that sends everything first, then closes it', async (t) => {
  // Node closes such a connection right after the reply, and the unread body then made the kernel reset it,
  // taking the reply with it: EPIPE for Python's urllib (Connection: close) and http.client (a 413 of
  // Fastify's own JSON parser, which closes), HTTP/1.0 clients, and Expect clients that do not wait for 100.
  const app = await build(t)
  const base = await listen(app)
  const body = Buffer.alloc(12 * 2 ** 20, 'x')
  const wrongKey = (head: string) => head.replace(`Bearer ${TEST_KEY}`, 'Bearer wrong-key')
  const cases: Array<[string, string, RegExp]> = [
    ['Connection: close', wrongKey(requestHead('/api/thumbnail', body.length, ['connection: close'])), /^HTTP\/1\.1 401 [\s\S]*"code":"THUMBD_UNAUTHORIZED"/],
    ['HTTP/1.0', wrongKey(requestHead('/api/thumbnail', body.length)).replace('HTTP/1.1', 'HTTP/1.0'), /^HTTP\/1\.1 401 /],
    ['a body parser\'s 413', requestHead('/api/thumbnail', body.length).replace('image/jpeg', 'application/json'), /^HTTP\/1\.1 413 [\s\S]*connection: close/i]
  ]
  for (const [label, head, expected] of cases) {
    const client = await rawClient(portOf(base))
    const writeError = await writeBeforeReading(client, head, body)
    await waitFor(() => client.socket.destroyed, 10_000, `${label}: the server to close the connection`)
    const error = await client.closed
    assert.match(client.reply(), expected, `${label}: ${writeError ?? error ?? ''} ${client.reply()}`)
    assert.equal(writeError ?? error, undefined, `${label}: the server closed the connection cleanly`)
  }
  app.drain(60_000).catch(() => {})
  const { reply, error } = await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', body.length, ['expect: 100-continue']), body)
  assert.match(reply, /^HTTP\/1\.1 503 /, `Expect, body sent at once: ${error ?? ''} ${reply}`)
})

test('Expect: 100-continue is honoured: a refused client never sends its body, an admitted one is asked for it', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  const jpeg = await media('jpeg')
  const admitted = await rawClient(portOf(base))
  admitted.socket.write(requestHead('/api/thumbnail', jpeg.length, ['expect: 100-continue']))
  await waitFor(() => admitted.reply().startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 5000, '100 Continue')
  admitted.socket.write(jpeg)
  await waitFor(() => /HTTP\/1\.1 200 /.test(admitted.reply()), 10_000, 'the thumbnail')
  admitted.socket.destroy()

  const bytesRead: number[] = []
  app.server.on('connection', (socket: Socket) => socket.on('close', () => bytesRead.push(socket.bytesRead)))
  app.drain(60_000).catch(() => {})
  const refused = await rawClient(portOf(base))
  refused.socket.write(requestHead('/api/thumbnail', 50 * 2 ** 20, ['expect: 100-continue']))
  await waitFor(() => refused.reply().includes('\r\n\r\n'), 5000, 'the refusal')
  assert.match(refused.reply(), /^HTTP\/1\.1 503 /, 'the final answer, with no 100 before it')
  refused.socket.destroy()
  await waitFor(() => bytesRead.length > 0, 5000, 'the connection to close')
  assert.ok(bytesRead[0]! < 4096, `the server read ${bytesRead[0]} bytes: the headers only`)
})

test('what a refusal reads of a body is bounded: past LINGER_BYTES the connection is cut', async (t) => {
  const app = await build(t, { MAX_SOURCE_BYTES: String(2 ** 20) })
  const base = await listen(app)
  const bytesRead: number[] = []
  app.server.on('connection', (socket: Socket) => socket.on('close', () => bytesRead.push(socket.bytesRead)))
  // Declared over MAX_SOURCE_BYTES: 413 at once. A client that sends it all still gets it ...
  const small = Buffer.alloc(8 * 2 ** 20)
  const { reply } = await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', small.length), small)
  assert.match(reply, /^HTTP\/1\.1 413 [\s\S]*"code":"THUMBD_PAYLOAD_TOO_LARGE"/)
  // ... but no more than LINGER_BYTES of a body is ever read for nothing.
  const huge = Buffer.alloc(LINGER_BYTES * 3)
  await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', huge.length), huge)
  await waitFor(() => bytesRead.length === 2, 10_000, 'both connections to close')
  assert.ok(bytesRead[1]! < LINGER_BYTES + 4 * 2 ** 20, `the server read ${bytesRead[1]} of ${huge.length} bytes`)
})

test('under saturation, clients that read only after sending see 200s and 503s, never a reset', async (t) => {
  const app = await build(t, { MAX_QUEUE_WAIT_MS: '300' })
  const base = await listen(app)
  const jpeg = await media('jpeg-large')
  const statuses: string[] = []
  await Promise.all(Array.from({ length: 30 }, async () => {
    for (let i = 0; i < 3; i++) {
      const { reply, error } = await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', jpeg.length, ['connection: close']), jpeg)
      statuses.push(/^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1] ?? `no answer (${error})`)
    }
  }))
  const counts = Object.groupBy(statuses, s => s)
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(Object.entries(counts).map(([s, list]) => [s, list!.length])))}`)
  assert.deepEqual(Object.keys(counts).filter(s => s !== '200' && s !== '503'), [], 'only 200 and 503')
  assert.ok((counts['503']?.length ?? 0) > 0, 'the queue bound was reached (else this proves nothing)')
  assert.ok((counts['200']?.length ?? 0) > 0, 'and work was done')
})

test('refused bodies are read at LINGER_BYTES_PER_SECOND at most, all clients together, and each still gets its 503', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  app.drain(60_000).catch(() => {})
  // 32 x 16 MiB: the 32 MiB burst, then 480 MiB at the budget's rate, 7.5 s, past LINGER_MS: the budget's
  // pauses are the server's wait, not the client's (when they counted, 26-27 of 32 clients got a reset).
  // Read as fast as they arrive, 8 such bodies took 0.2-0.7 s here.
  const body = Buffer.alloc(16 * 2 ** 20)
  const clients = 32
  const started = performance.now()
  const replies = await Promise.all(Array.from({ length: clients }, () => sendAllThenRead(portOf(base), requestHead('/api/thumbnail', body.length), body)))
  const elapsedMs = performance.now() - started
  for (const { reply, error } of replies) assert.match(reply, /^HTTP\/1\.1 503 [\s\S]*"code":"THUMBD_DRAINING"/, `${error ?? ''} ${reply}`)
  const atBudgetMs = (clients * body.length - 32 * 2 ** 20) / LINGER_BYTES_PER_SECOND * 1000
  assert.ok(atBudgetMs > LINGER_MS, 'the flood outlasts LINGER_MS (else the deadline is not tested)')
  assert.ok(elapsedMs > atBudgetMs * 0.8, `${clients * 16} MiB of refused bodies were read in ${elapsedMs.toFixed(0)} ms: faster than the budget allows (${atBudgetMs.toFixed(0)} ms)`)
})

test('a pipelined refusal that closes its connection, behind a job on the same connection, still reaches its client', async (t) => {
  // The half-close belongs to the refused request: the job's reply, finishing first, must not close the socket
  // with the refused body unread (found by a red-team read: EPIPE, no 401).
  const app = await build(t)
  const base = await listen(app)
  const jpeg = await media('jpeg')
  const body = Buffer.alloc(4 * 2 ** 20)
  const refused = requestHead('/api/thumbnail', body.length, ['connection: close']).replace(`Bearer ${TEST_KEY}`, 'Bearer wrong-key')
  const client = await rawClient(portOf(base))
  const writeError = await writeBeforeReading(client, requestHead('/api/thumbnail', jpeg.length), jpeg, refused, body)
  const error = writeError ?? await client.closed
  assert.deepEqual(client.reply().match(/HTTP\/1\.1 \d{3} /g), ['HTTP/1.1 200 ', 'HTTP/1.1 401 '], error)
  assert.equal(error, undefined)
})

test('closing the server waits LINGER_MS at most for lingering bodies, though the budget\'s pauses extend them', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  app.drain(60_000).catch(() => {})
  // 32 x 16 MiB: at the budget's rate their lingers would run ~7.5 s.
  const body = Buffer.alloc(16 * 2 ** 20)
  const clients = Array.from({ length: 32 }, () => sendAllThenRead(portOf(base), requestHead('/api/thumbnail', body.length), body).catch(() => {}))
  await new Promise(resolve => setTimeout(resolve, 500))
  const started = performance.now()
  await app.close()
  const closeMs = performance.now() - started
  await Promise.all(clients)
  assert.ok(closeMs < LINGER_MS + 1000, `app.close() took ${closeMs.toFixed(0)} ms`)
})

test('a body refused part way through its intake (not media) is read and dropped: the client sees its 415, not a reset', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  const notMedia = Buffer.alloc(5 * 2 ** 20, 'x')
  for (let i = 0; i < 2; i++) {
    const { reply, error } = await sendAllThenRead(portOf(base), requestHead('/api/thumbnail', notMedia.length), notMedia)
    assert.match(reply, /^HTTP\/1\.1 415 [\s\S]*"code":"THUMBD_UNSUPPORTED_MEDIA"/, `try ${i}: ${error ?? ''} ${reply}`)
  }
})

test('a refused body is dropped without taking its connection off Node\'s native HTTP parser', async (t) => {
  // A 'data' listener on the socket (how the linger first counted bytes) makes Node hand every later body on
  // that kept-alive connection to JavaScript stream events: under a flood of refusals that was most of the
  // main thread's tail (/health p99 14.7 -> 10.5 ms, src/plugins/slow-clients.ts). parser._consumed is Node's
  // own mark of the native path.
  const app = await build(t)
  const base = await listen(app)
  const nativeParsing: Array<boolean | undefined> = []
  app.server.on('request', (request: { url?: string, socket: { parser?: { _consumed?: boolean } } }) => {
    if (request.url === '/health') nativeParsing.push(request.socket.parser?._consumed)
  })
  const body = Buffer.alloc(2 * 2 ** 20)
  const client = await rawClient(portOf(base))
  const refused = requestHead('/api/thumbnail', body.length).replace(`Bearer ${TEST_KEY}`, 'Bearer wrong-key')
  client.socket.write(Buffer.concat([Buffer.from('GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n'), Buffer.from(refused), body, Buffer.from('GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n')]))
  await waitFor(() => (client.reply().match(/HTTP\/1\.1 \d{3} /g) ?? []).length === 3, 10_000, 'three answers on one connection')
  client.socket.end()
  assert.deepEqual(client.reply().match(/HTTP\/1\.1 \d{3} /g), ['HTTP/1.1 200 ', 'HTTP/1.1 401 ', 'HTTP/1.1 200 '])
  assert.deepEqual(nativeParsing, [true, true], 'the request after the refusal is still parsed natively')
})
