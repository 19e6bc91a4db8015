// Fetched bodies from an HTTPS origin, as most real origins are: undici's chunks then come from TLS records
// (16 KB each), and the slab fill (src/sources/spool.ts) frees each one once the next has come. The bytes must
// land whole, every chunk's memory must go, and the keep-alive connections must be reused as they are when
// nothing is freed (a chunk freed under undici's parser cost the connection, see slab-copy.test.ts).
import assert from 'node:assert/strict'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { Agent, request } from 'undici'
import { contentLength } from '../../src/sources/fetch-source.ts'
import { slabs } from '../../src/sources/slabs.ts'
import { spool } from '../../src/sources/spool.ts'
import { TempDir } from '../../src/sources/temp-dir.ts'
import { selfSignedCertificate } from '../../load/self-signed.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'

test('photos from an HTTPS origin go onto their slab whole, every chunk freed, keep-alive connections reused as without freeing', async (t) => {
  const dir = tempFolder('thumbd-tls-', t)
  const { key, cert } = selfSignedCertificate(dir)
  const photo = await media('jpeg-large')
  let connections = 0
  const origin = createServer({ key, cert }, (req, res) => {
    // A 206 of the whole file to "bytes=0-", as thumbd's first request gets from nginx or S3; else a 200.
    const ranged = req.headers.range === 'bytes=0-'
    res.writeHead(ranged ? 206 : 200, { 'content-length': photo.length, ...(ranged ? { 'content-range': `bytes 0-${photo.length - 1}/${photo.length}` } : {}) })
    res.end(photo)
  })
  origin.on('secureConnection', () => connections++)
  await new Promise<void>(resolve => origin.listen(0, '127.0.0.1', resolve))
  t.after(() => { origin.closeAllConnections(); origin.close() })
  const url = `https://127.0.0.1:${(origin.address() as AddressInfo).port}/photo.jpg`
  const tempDir = await TempDir.create(dir)

  /** `times` fetches on one agent; the chunks undici pushed, whether each body landed whole, and the connections. */
  async function fetchAll (times: number, ownsChunks: boolean) {
    const agent = new Agent({ connect: { rejectUnauthorized: false } })
    const before = connections
    const chunks: Buffer[] = []
    const whole: boolean[] = []
    for (let i = 0; i < times; i++) {
      const { body, headers } = await request(url, { dispatcher: agent, headers: i % 2 === 0 ? { range: 'bytes=0-' } : {} })
      const push = body.push
      body.push = function (chunk: Buffer | null, encoding?: BufferEncoding) {
        if (chunk !== null) chunks.push(chunk)
        return push.call(this, chunk, encoding)
      }
      const taken = await spool(body, { maxBytes: 1 << 26, memoryBytes: 1 << 24, tempDir, hashInJob: true, ownsChunks, declaredBytes: contentLength(headers) })
      whole.push(taken.ref.location === 'memory' && Buffer.from(taken.ref.bytes).equals(photo))
      await taken.dispose()
    }
    await agent.close()
    return { chunks, whole, connections: connections - before }
  }

  const kept = await fetchAll(8, false)
  const freed = await fetchAll(8, true)
  assert.deepEqual(freed.whole, freed.whole.map(() => true), 'every photo lands whole')
  assert.ok(freed.chunks.length >= 8 * 4, `several chunks a photo (${freed.chunks.length})`)
  assert.equal(freed.chunks.filter(chunk => (chunk.buffer as ArrayBuffer).detached).length, freed.chunks.length, 'every chunk\'s memory is given back')
  assert.equal(freed.connections, kept.connections, 'connections are reused as they are when nothing is freed')
  assert.equal(slabs.slabsInUse, 0)
  await tempDir.destroy()
})
