import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { AUTH, build, leftoverTempFiles, postMedia } from '../helper.ts'
import { media } from '../media.ts'

type Part = { name: string, value: string } | { name: string, file: Buffer, type?: string }

function multipart (parts: Part[]) {
  const boundary = `----thumbd${randomBytes(8).toString('hex')}`
  const chunks: Buffer[] = []
  for (const part of parts) {
    const head = 'file' in part
      ? `Content-Disposition: form-data; name="${part.name}"; filename="upload.bin"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n`
      : `Content-Disposition: form-data; name="${part.name}"\r\n`
    chunks.push(Buffer.from(`--${boundary}\r\n${head}\r\n`), 'file' in part ? part.file : Buffer.from(part.value), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

test('a multipart upload gives the same thumbnail as the raw upload of the same file', async (t) => {
  const app = await build(t)
  for (const [name, type] of [['jpeg', 'image/jpeg'], ['mp4-h264', 'video/mp4']] as const) {
    const file = await media(name)
    const raw = await postMedia(app, 'thumbnail', file, type, '?width=200&format=webp')
    const form = await app.inject({ method: 'POST', url: '/api/thumbnail?width=200&format=webp', ...multipart([{ name: 'file', file, type }]) })
    assert.equal(form.statusCode, 200, form.body)
    assert.ok(form.rawPayload.equals(raw.rawPayload), name)
    // Options may also come as fields before the file.
    const fields = await app.inject({ method: 'POST', url: '/api/thumbnail', ...multipart([{ name: 'width', value: '200' }, { name: 'format', value: 'webp' }, { name: 'file', file }]) })
    assert.equal(fields.statusCode, 200, fields.body)
    assert.ok(fields.rawPayload.equals(raw.rawPayload), `${name} with option fields`)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('multipart mistakes get clear 4xx codes', async (t) => {
  const app = await build(t, { MAX_SOURCE_BYTES: '200000' })
  const jpeg = await media('jpeg')
  const cases: Array<[string, Part[], number, string]> = [
    ['no file part', [{ name: 'width', value: '10' }], 400, 'THUMBD_BAD_OPTIONS'],
    ['file under another name', [{ name: 'upload', file: jpeg }], 400, 'THUMBD_BAD_OPTIONS'],
    ['bad option field', [{ name: 'width', value: 'huge' }, { name: 'file', file: jpeg }], 400, 'THUMBD_BAD_OPTIONS'],
    ['unknown option field', [{ name: 'colour', value: 'red' }, { name: 'file', file: jpeg }], 400, 'THUMBD_BAD_OPTIONS'],
    ['repeated field', [{ name: 'width', value: '10' }, { name: 'width', value: '20' }, { name: 'file', file: jpeg }], 400, 'THUMBD_BAD_OPTIONS'],
    // Applied or not depending on how far the parser had got: always refused.
    ['field after the file', [{ name: 'file', file: jpeg }, { name: 'width', value: '100' }], 400, 'THUMBD_BAD_OPTIONS'],
    ['field after a large file', [{ name: 'file', file: Buffer.concat([jpeg, Buffer.alloc(150_000)]) }, { name: 'width', value: '100' }], 400, 'THUMBD_BAD_OPTIONS'],
    ['not media', [{ name: 'file', file: Buffer.from('hello') }], 415, 'THUMBD_UNSUPPORTED_MEDIA'],
    ['too large', [{ name: 'file', file: Buffer.concat([jpeg, Buffer.alloc(300_000)]) }], 413, 'THUMBD_PAYLOAD_TOO_LARGE']
  ]
  for (const [name, parts, status, code] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/thumbnail', ...multipart(parts) })
    assert.equal(res.statusCode, status, `${name}: ${res.body}`)
    assert.equal(res.json().code, code, name)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})
