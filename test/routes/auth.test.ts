import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import { app, serverOptions } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { TEST_TMP } from '../helper.ts'
import { media } from '../media.ts'

/**
 * The app as buildApp makes it (the server's own logger options, with their redact setting), plus what a
 * user debugging a deployment would add: a hook that logs every request's headers at trace level. Fastify
 * never logs headers itself, so without this hook no test could tell whether the redaction works.
 */
async function appLoggingHeaders (t: { after: (fn: () => Promise<unknown>) => void }, logs: PassThrough) {
  const config = loadConfig({ API_KEYS: 'first-key-abcdef,second-key-ghijkl', LOG_LEVEL: 'trace', TMP_DIR: TEST_TMP, POOL_THREADS: '1' })
  const fastify = Fastify(serverOptions(config, logs))
  fastify.addHook('onRequest', async (request) => { request.log.trace({ headers: request.headers }, 'request headers') })
  await fastify.register(fp(app), { config })
  await fastify.ready()
  t.after(() => fastify.close())
  return fastify
}

test('every configured key works, and no key ever reaches the logs, even when headers are logged', async (t) => {
  const logs = new PassThrough()
  let logged = ''
  logs.on('data', (chunk: Buffer) => { logged += chunk.toString() })
  const server = await appLoggingHeaders(t, logs)
  const jpeg = await media('jpeg')
  for (const key of ['first-key-abcdef', 'second-key-ghijkl', 'wrong-key-mnopqr']) {
    const res = await server.inject({ method: 'POST', url: '/api/thumbnail', headers: { authorization: `Bearer ${key}`, 'content-type': 'image/jpeg' }, payload: jpeg })
    assert.equal(res.statusCode, key.startsWith('wrong') ? 401 : 200)
  }
  assert.ok(logged.includes('request completed'), 'requests were logged')
  // The headers were logged, each time with the authorization header censored.
  const headerLines = logged.split('\n').filter(line => line.includes('"request headers"'))
  assert.equal(headerLines.length, 3, 'the headers of every request were logged')
  for (const line of headerLines) assert.equal(JSON.parse(line).headers.authorization, '[redacted]')
  for (const key of ['first-key', 'second-key', 'wrong-key']) assert.ok(!logged.includes(key), `${key} not in logs`)
})
