// The GET dialect's video replies with a result store: a storyboard's sprite, its WebVTT and a preview made
// on one replica answer on another without a fetch or a job. A kept .vtt's cues point at the sprite URL signed
// as the hit's own request was (a rotated key signs with the new key), never at the URL of the miss.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'
import { metric, photoOrigin, replica, sign, SIGNING, written } from './store-helpers.ts'

const videoJobs = (app: Parameters<typeof metric>[0]) => metric(app, /thumbd_jobs_total\{kind="(?:storyboard|preview)",outcome="ok"\} (\d+)/)

test('a storyboard sprite, its .vtt and a preview: kept by one replica, served by another, the .vtt signed for its own request', async (t) => {
  const origin = await photoOrigin(t, await media('mp4-h264'))
  const storage = pathToFileURL(tempFolder('thumbd-results-', t)).href
  const one = await replica(t, origin.base, storage)
  const newKey = Buffer.alloc(32, 7)
  const newSalt = Buffer.alloc(32, 9)
  const two = await replica(t, origin.base, storage, { URL_SIGNING_KEYS: `${newKey.toString('hex')},${SIGNING.URL_SIGNING_KEYS}`, URL_SIGNING_SALTS: `${newSalt.toString('hex')},${SIGNING.URL_SIGNING_SALTS}` })
  const board = `/vtt:0:4:2:64:0/plain/${origin.base}/clip.mp4`
  const paths = [`${board}@jpg`, `${board}@vtt`, `/vta:-1:100:3:96:0/plain/${origin.base}/clip.mp4@gif`]
  const misses = []
  for (const path of paths) {
    const res = await one.inject({ url: sign(path) })
    assert.equal(res.statusCode, 200, `${path}: ${res.body}`)
    misses.push(res)
  }
  const fetched = origin.hits.length
  await written(one, 3)
  for (const [n, path] of paths.entries()) {
    const hit = await two.inject({ url: sign(path, newKey, newSalt) })
    assert.equal(hit.statusCode, 200, hit.body)
    assert.match(String(hit.headers['server-timing']), /^result;desc="file"/, path)
    for (const name of ['etag', 'content-type', 'cache-control']) assert.equal(hit.headers[name], misses[n]!.headers[name], `${path} ${name}`)
    if (n !== 1) assert.ok(hit.rawPayload.equals(misses[n]!.rawPayload), path)
  }
  assert.equal(origin.hits.length, fetched, 'no fetch')
  assert.equal(await videoJobs(two), 0, 'no job')
  const vtt = (await two.inject({ url: sign(`${board}@vtt`, newKey, newSalt) })).body
  const sprite = sign(`${board}@jpg`, newKey, newSalt)
  assert.ok(vtt.startsWith('WEBVTT'))
  assert.ok(!vtt.includes('{thumbd-sprite-url}'))
  assert.equal(vtt, misses[1]!.body.replaceAll(sign(`${board}@jpg`), sprite), 'the miss\'s cues, pointing at the sprite signed with the new key')
})
