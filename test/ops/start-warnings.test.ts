// Development switches that lower a guard are never silent: a start with one logs one warning naming it.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { build } from '../helper.ts'

async function startWarnings (t: Parameters<typeof build>[0], env: Record<string, string>): Promise<string[]> {
  const logs = new PassThrough()
  let text = ''
  logs.on('data', chunk => { text += chunk })
  await build(t, { ...env, LOG_LEVEL: 'warn', POOL_THREADS: '1' }, { logStream: logs })
  return text.split('\n').filter(Boolean).map(line => JSON.parse(line) as { level: number, msg: string }).filter(l => l.level === 40).map(l => l.msg)
}

test('ALLOW_UNSIGNED_URLS=true and ALLOW_PRIVATE_SOURCES=true each log one warning at start, naming the variable', async (t) => {
  const both = await startWarnings(t, { ALLOW_UNSIGNED_URLS: 'true', ALLOW_PRIVATE_SOURCES: 'true' })
  assert.equal(both.filter(msg => msg.startsWith('ALLOW_UNSIGNED_URLS=true')).length, 1, both.join('\n'))
  assert.equal(both.filter(msg => msg.startsWith('ALLOW_PRIVATE_SOURCES=true')).length, 1, both.join('\n'))
  const one = await startWarnings(t, { ALLOW_PRIVATE_SOURCES: 'true' })
  assert.equal(one.filter(msg => /ALLOW_/.test(msg)).length, 1, one.join('\n'))
  const none = await startWarnings(t, {})
  assert.deepEqual(none.filter(msg => /ALLOW_/.test(msg)), [])
})
