// The answer to a URL source's "Range: bytes=0-" (src/sources/first-range.ts): a whole file too small to stay
// remote is spooled from the fetched body itself, framed by its size, as a 200's body is (no sniffing first); a
// file large enough to stay remote is sniffed first, and an image among them is spooled from what was peeked.
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { fromFirstRange, type FirstRangeContext } from '../../src/sources/first-range.ts'
import type { FetchedBody } from '../../src/sources/fetch-source.ts'
import type { RangeReader } from '../../src/sources/range-reader.ts'
import type { SpooledSource } from '../../src/sources/spool.ts'
import { media } from '../media.ts'

/** A 206 carrying the whole of `bytes`, as nginx, S3 or a CDN answers "bytes=0-"; `length`: its Content-Length (null: none). */
const wholeAnswer = (bytes: Buffer, length: number | null = bytes.length): FetchedBody => ({
  body: Readable.from([bytes.subarray(0, 5000), bytes.subarray(5000)], { objectMode: false }),
  url: new URL('http://origin.test/photo.jpg'),
  statusCode: 206,
  headers: { 'content-range': `bytes 0-${bytes.length - 1}/${bytes.length}`, ...(length === null ? {} : { 'content-length': String(length) }) }
})

// An image never stays remote: the reader must not be asked.
const reader: RangeReader = {
  open: () => { throw new Error('an image was made remote') },
  close: async () => {}
}

function contextSpooling (remoteFromBytes: number) {
  const calls: Array<{ stream: Readable, framedBytes: number | undefined, bytes: Buffer }> = []
  const context: FirstRangeContext = {
    fetch: () => { throw new Error('the whole file was in the first answer') },
    reader,
    remoteFromBytes,
    maxSourceBytes: 1 << 30,
    spool: async (stream, framedBytes) => {
      const chunks: Buffer[] = []
      for await (const chunk of stream) chunks.push(chunk as Buffer)
      calls.push({ stream, framedBytes, bytes: Buffer.concat(chunks) })
      return { size: 0 } as unknown as SpooledSource
    }
  }
  return { context, calls }
}

test('a whole 206 too small to stay remote is spooled from the fetched body itself, framed by its size', async () => {
  const photo = await media('jpeg')
  const fetched = wholeAnswer(photo)
  const { context, calls } = contextSpooling(photo.length + 1)
  await fromFirstRange(fetched, new AbortController().signal, context)
  assert.equal(calls.length, 1)
  assert.equal(calls[0]!.stream, fetched.body, 'the body undici gave, not a stream wrapped around it')
  assert.equal(calls[0]!.framedBytes, photo.length)
  assert.ok(calls[0]!.bytes.equals(photo))
})

test('a whole 206 without a Content-Length (chunked), or with one that disagrees with its range, is not framed', async () => {
  const photo = await media('jpeg')
  for (const length of [null, photo.length + 1000, photo.length - 1]) {
    const fetched = wholeAnswer(photo, length)
    const { context, calls } = contextSpooling(photo.length + 1)
    await fromFirstRange(fetched, new AbortController().signal, context)
    assert.equal(calls.length, 1)
    assert.equal(calls[0]!.framedBytes, undefined, `Content-Length ${length}`)
  }
})

test('a whole 206 large enough to stay remote is sniffed first; an image is then spooled whole, unframed', async () => {
  const photo = await media('jpeg')
  const fetched = wholeAnswer(photo)
  const { context, calls } = contextSpooling(photo.length)
  await fromFirstRange(fetched, new AbortController().signal, context)
  assert.equal(calls.length, 1)
  assert.notEqual(calls[0]!.stream, fetched.body, 'what was peeked, then the rest')
  assert.equal(calls[0]!.framedBytes, undefined)
  assert.ok(calls[0]!.bytes.equals(photo))
})

test('an unframed 206 that sends more than its Content-Range announced is cut there with 502, not read to MAX_SOURCE_BYTES', async () => {
  const photo = await media('jpeg')
  let sent = 0
  // Chunked (no Content-Length), "bytes 0-999/1000", then 1000 bytes and on and on.
  async function * lying () {
    for (let i = 0; i < 64; i++) {
      sent += 64 * 1024
      yield i === 0 ? photo.subarray(0, 64 * 1024) : Buffer.alloc(64 * 1024)
    }
  }
  for (const remoteFromBytes of [1 << 30, 1000]) { // spooled at once, or sniffed first
    sent = 0
    const fetched: FetchedBody = { body: Readable.from(lying(), { objectMode: false }), url: new URL('http://origin.test/photo.jpg'), statusCode: 206, headers: { 'content-range': 'bytes 0-999/1000' } }
    const { context } = contextSpooling(remoteFromBytes)
    await assert.rejects(fromFirstRange(fetched, new AbortController().signal, context), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'THUMBD_SOURCE_FETCH_FAILED', err.message)
      assert.match(err.message, /sent more than it announced \(bytes 0-999\/1000\)/)
      return true
    })
    assert.ok(sent < 1024 * 1024, `${sent} bytes read`)
  }
})
