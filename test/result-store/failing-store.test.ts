// A result store that fails or hangs never fails a request: the reply is served from a fresh job, the failure
// is counted in /metrics (per store) and logged once, not per request. Real failures of a real filesystem: a
// directory that cannot exist (a file stands where it should be), and an entry that never finishes reading
// (a FIFO with no writer: open() blocks, as a hung network filesystem does).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, linkSync, mkdirSync, openSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { entryPath, resultKey } from '../../src/result-store/key.ts'
import { READ_TIMEOUT_MS } from '../../src/result-store/result-store.ts'
import { normalisedOptions, parseProcessingPath } from '../../src/signed-urls/parse.ts'
import { tempFolder } from '../temp-folder.ts'
import { jobs, photoOrigin, reads, replica, sign, written } from './store-helpers.ts'

test('a store that cannot be written or read: every GET still 200, each failure counted, logged once', async (t) => {
  const origin = await photoOrigin(t)
  const folder = tempFolder('thumbd-results-', t)
  writeFileSync(join(folder, 'file'), 'not a directory')
  const logs = new PassThrough()
  let logged = ''
  logs.on('data', (chunk: Buffer) => { logged += chunk.toString() })
  const app = await replica(t, origin.base, pathToFileURL(join(folder, 'file', 'results')).href, { LOG_LEVEL: 'warn' }, { logStream: logs })
  for (let n = 0; n < 3; n++) {
    const res = await app.inject({ url: sign(`/w:100/plain/${origin.base}/${n}.jpg@webp`) })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['content-type'], 'image/webp')
  }
  await written(app, 3, 'error')
  assert.equal(await reads(app, 'error'), 3)
  assert.equal(await reads(app, 'hit'), 0)
  assert.equal(await jobs(app), 3)
  const lines = logged.split('\n').filter(line => line.includes('result store'))
  assert.equal(lines.filter(line => line.includes('a read failed')).length, 1, 'a failing read logged once for the three')
  assert.equal(lines.filter(line => line.includes('a write failed')).length, 1, 'a failing write logged once for the three')
  assert.equal(lines.filter(line => line.includes('at start')).length, 1, 'the start says the directory cannot be read')
})

test('a read that hangs is a miss after the read timeout: the GET is served from a job, the timeout counted', async (t) => {
  const origin = await photoOrigin(t)
  const folder = tempFolder('thumbd-results-', t)
  const path = `/w:100/plain/${origin.base}/slow.jpg@webp`
  const { source, options } = parseProcessingPath(path)
  const entry = join(folder, entryPath(resultKey({ kind: 'image', source, options: normalisedOptions(options), format: 'webp', defaultQuality: { jpeg: 80, webp: 79, avif: 63 } })))
  mkdirSync(join(entry, '..'), { recursive: true })
  execFileSync('mkfifo', [entry])
  // A second name for the FIFO: the miss's write renames a new entry over the first.
  const fifo = join(folder, 'fifo')
  linkSync(entry, fifo)
  const app = await replica(t, origin.base, pathToFileURL(folder).href)
  const started = performance.now()
  // Lets the blocked open() go (a libuv thread waits in it): after the request, or at the latest well past the
  // read timeout, so that a store that waited for the read fails this test rather than hangs it.
  const release = () => { try { closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)) } catch {} }
  const latest = setTimeout(release, READ_TIMEOUT_MS + 5000)
  let res
  try {
    res = await app.inject({ url: sign(path) })
  } finally {
    clearTimeout(latest)
    release()
  }
  const took = performance.now() - started
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(await reads(app, 'timeout'), 1)
  assert.equal(await jobs(app), 1)
  assert.ok(took >= READ_TIMEOUT_MS && took < READ_TIMEOUT_MS + 3000, `${took.toFixed(0)} ms`)
})
