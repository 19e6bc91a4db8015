// A job's outputs take their routes' own options (src/batch/spec.ts derives them): every option a route takes is
// an output's option with the same schema, and what a route refuses, POST /api/jobs refuses too, with the same
// code, before anything is queued.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { TSchema } from 'typebox'
import { AUTH } from '../helper.ts'
import { media } from '../media.ts'
import { OutputSpec } from '../../src/batch/spec.ts'
import { HashQuery } from '../../src/routes/options.ts'
import { PreviewOptions } from '../../src/routes/preview.ts'
import { ResizeOptions } from '../../src/routes/resize.ts'
import { StoryboardOptions } from '../../src/routes/storyboard.ts'
import { ThumbnailOptions } from '../../src/routes/thumbnail.ts'
import { buildJobsApp, jobsEnv, submit } from './jobs-helper.ts'

const outputOf = (kind: string) => (OutputSpec.anyOf as TSchema[]).find(s => (s as { properties: { kind: { const: string } } }).properties.kind.const === kind) as unknown as { properties: Record<string, TSchema> }
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>

test('each output takes its route\'s options with the route\'s schemas (formats without auto, no sprite URL, algorithms as an array)', () => {
  const routes: Array<[string, Record<string, TSchema>, string[]]> = [
    ['still', ThumbnailOptions.properties, ['format']],
    ['variant', ResizeOptions.properties, ['format']],
    ['storyboard', StoryboardOptions.properties, ['sprite']],
    ['preview', PreviewOptions.properties, []],
    ['hashes', HashQuery, ['algorithms']]
  ]
  for (const [kind, options, differ] of routes) {
    const output = outputOf(kind).properties
    for (const [name, schema] of Object.entries(options)) {
      if (differ.includes(name)) continue
      assert.deepEqual(plain(output[name]), plain(schema), `${kind}.${name}`)
    }
  }
  // A file has no Accept header: every format the routes write, but auto.
  for (const kind of ['still', 'variant']) {
    assert.deepEqual(plain(outputOf(kind).properties.format).enum, (plain(ThumbnailOptions.properties.format).enum as string[]).filter(f => f !== 'auto'), kind)
  }
  assert.equal(outputOf('storyboard').properties.sprite, undefined)
})

test('what a route refuses, POST /api/jobs refuses too, with the same code, and queues nothing', async (t) => {
  const photo = await media('jpeg')
  const env = await jobsEnv(t, {})
  const app = await buildJobsApp(t, env.env)
  const cases: Array<[string, Record<string, string>, Record<string, unknown>]> = [
    ['preview', { width: '8' }, { kind: 'preview', width: 8 }],
    ['preview', { frames: '999' }, { kind: 'preview', frames: 999 }],
    ['storyboard', { width: '700' }, { kind: 'storyboard', width: 700 }],
    ['storyboard', { interval: '5', count: '10' }, { kind: 'storyboard', interval: 5, count: 10 }],
    ['storyboard', { columns: '50', width: '640' }, { kind: 'storyboard', columns: 50, width: 640 }],
    ['thumbnail', { at: '150%' }, { kind: 'still', at: '150%' }],
    ['thumbnail', { quality: '0' }, { kind: 'still', quality: 0 }],
    ['resize', { position: 'middle' }, { kind: 'variant', position: 'middle' }],
    ['hash', { at: '1.2345' }, { kind: 'hashes', at: '1.2345' }]
  ]
  for (const [route, query, output] of cases) {
    const direct = await app.inject({ method: 'POST', url: `/api/${route}?${new URLSearchParams(query)}`, headers: { ...AUTH, 'content-type': 'image/jpeg' }, payload: photo })
    const job = await submit(app, { source: { url: `${env.origin}/v.mp4` }, destination: `file://${env.root}/refused`, outputs: [output] })
    const what = `${route} ${JSON.stringify(query)}`
    assert.equal(direct.statusCode, 400, `${what}: ${direct.body}`)
    assert.equal(job.statusCode, direct.statusCode, `${what}: ${job.body}`)
    assert.equal(job.json().code, direct.json().code, what)
  }
  assert.ok(!existsSync(join(env.root, 'refused')), 'nothing written for a refused job')
})
