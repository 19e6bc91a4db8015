// The frames between a pool thread and its launcher or zygote: cut right whatever the chunk boundaries, a tool's
// output handed on in pieces (never gathered), every other payload whole.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FRAME, FrameReader, encodeFrame } from '../../../workers/tools/launcher-protocol.ts'

const stream = Buffer.concat([
  encodeFrame(1, FRAME.stdout, Buffer.from('pixels '.repeat(40))),
  encodeFrame(2, FRAME.error, Buffer.from('{"message":"no"}')),
  encodeFrame(1, FRAME.stdout, Buffer.alloc(0)),
  encodeFrame(1, FRAME.exit, Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]))
])

/** What the reader delivers for `stream` cut into chunks of `size` bytes: payloads of a frame joined, with their piece counts. */
function read (size: number) {
  const reader = new FrameReader([FRAME.stdout])
  const frames: Array<{ id: number, type: number, payload: string, pieces: number }> = []
  let current: typeof frames[number] | undefined
  for (let at = 0; at < stream.length; at += size) {
    reader.push(stream.subarray(at, at + size), (id, type, payload) => {
      if (type === FRAME.stdout && current?.type === FRAME.stdout && current.id === id && payload.length > 0) {
        current.payload += payload.toString('latin1')
        current.pieces++
      } else frames.push(current = { id, type, payload: payload.toString('latin1'), pieces: 1 })
    })
  }
  return frames
}

test('frames come out the same whatever the chunk boundaries', () => {
  const whole = read(stream.length)
  assert.deepEqual(whole.map(f => [f.id, f.type, f.payload.length]), [[1, FRAME.stdout, 280], [2, FRAME.error, 16], [1, FRAME.stdout, 0], [1, FRAME.exit, 8]])
  for (const size of [1, 2, 7, 9, 10, 64, 281, 290]) {
    assert.deepEqual(read(size).map(({ id, type, payload }) => ({ id, type, payload })), whole.map(({ id, type, payload }) => ({ id, type, payload })), `chunks of ${size}`)
  }
})

test('a tool\'s output is handed on in the pieces it arrived in; other payloads whole, in one delivery', () => {
  const frames = read(7)
  assert.ok(frames[0]!.pieces > 1, 'stdout in pieces')
  assert.equal(frames[1]!.pieces, 1, 'the error whole')
  assert.equal(frames[3]!.pieces, 1, 'the exit whole')
})
