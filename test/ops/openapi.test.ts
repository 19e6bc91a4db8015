import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build } from '../helper.ts'

const ERROR_STATUSES = ['400', '401', '413', '415', '422', '500', '502', '503', '504']

test('GET /openapi.json describes every route, every source form and every error reply', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/openapi.json' })
  assert.equal(res.statusCode, 200)
  const doc = res.json()
  assert.match(doc.openapi, /^3\./)
  for (const path of ['/health', '/health/live', '/metrics']) assert.ok(doc.paths[path]?.get, path)
  for (const path of ['/api/thumbnail', '/api/resize', '/api/hash']) {
    const post = doc.paths[path]?.post
    assert.ok(post, path)
    assert.deepEqual(post.security, [{ bearer: [] }], `${path} needs a key`)
    assert.deepEqual(Object.keys(post.requestBody.content).sort(), ['application/json', 'application/octet-stream', 'audio/*', 'image/*', 'multipart/form-data', 'video/*'], path)
    assert.ok(post.requestBody.content['application/json'].schema.properties.url, `${path} takes a URL`)
    assert.ok(post.parameters.some((p: { name: string }) => p.name === (path === '/api/hash' ? 'algorithms' : 'width')), `${path} options`)
    assert.ok(post.responses['200'], `${path} 200`)
    for (const status of ERROR_STATUSES) {
      const reply = post.responses[status]
      assert.ok(reply, `${path} ${status}`)
      const schema = reply.content['application/json'].schema
      const resolved = schema.$ref === undefined ? schema : doc.components.schemas[schema.$ref.split('/').pop()]
      assert.deepEqual(Object.keys(resolved.properties).sort(), ['code', 'error', 'message', 'statusCode'], `${path} ${status}`)
    }
  }
  assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer')
  const ui = await app.inject({ url: '/docs' })
  assert.ok([200, 302].includes(ui.statusCode))
})
