import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { test } from 'node:test'
import { TEST_KEY, build } from '../helper.ts'
import { listen } from './helpers.ts'

const BODY_BYTES = 8 * 2 ** 20
/** What Node reads from a socket at a time. */
const READ_BYTES = 64 * 1024

/** Sends headers and body in one write; resolves with what came back once the server closed. */
async function sendUpload (port: number, headers: string): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let reply = ''
  socket.on('data', chunk => { reply += chunk.toString('latin1') })
  socket.on('error', () => {}) // the server may reset the connection once it has answered
  const closed = new Promise(resolve => socket.once('close', resolve))
  // All at once, as a client that does not wait for 100-continue would: the kernel takes megabytes before
  // the server has read a byte.
  socket.write(Buffer.concat([Buffer.from(headers), Buffer.alloc(BODY_BYTES)]))
  await closed
  return reply
}

test('a refused upload is answered and dropped, not read: the server reads a fraction of the body', async (t) => {
  const app = await build(t, { MAX_SOURCE_BYTES: String(2 ** 20) })
  const base = await listen(app)
  const bytesRead: number[] = []
  app.server.on('connection', (socket: Socket) => socket.on('close', () => bytesRead.push(socket.bytesRead)))
  const reply = await sendUpload(Number(new URL(base).port), [
    'POST /api/thumbnail HTTP/1.1',
    'host: localhost',
    `authorization: Bearer ${TEST_KEY}`,
    'content-type: image/jpeg',
    `content-length: ${BODY_BYTES}`,
    '', ''
  ].join('\r\n'))
  assert.match(reply, /^HTTP\/1\.1 413 /, 'the client got the refusal')
  assert.match(reply, /"code":"THUMBD_PAYLOAD_TOO_LARGE"/)
  assert.match(reply, /connection: close/i)
  assert.equal(bytesRead.length, 1)
  // One read: the one that brought the headers. Node's own close half-closes first and reads (and throws
  // away) ~200 KB more while it waits; under a flood of refused uploads that was most of the main thread's
  // allocation and the GC pauses that came with it.
  assert.ok(bytesRead[0]! < 2 * READ_BYTES, `the server read ${bytesRead[0]} of ${BODY_BYTES} bytes`)
})
