// The README's and docs/api.md's shell examples run against a real thumbd and a loopback origin, so that they
// cannot drift from what the server does: every curl gets a 2xx, every file an example writes is what its name
// says (thumb.webp is a WebP), and the signed GET URL is signed from .env as the README makes it.
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseEnv } from 'node:util'
import type { FastifyInstance } from 'fastify'
import sharp from 'sharp'
import { startStaticServer } from '../../load/static-server.ts'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { listen } from '../faults/helpers.ts'
import { TEST_KEY, TEST_TMP } from '../helper.ts'
import { media } from '../media.ts'
import { tempFolder } from '../temp-folder.ts'
import { curlCalls, inputs, localised, needsServer, outputs, runBlock, setsUpOrDeploys, shellBlocks, shims, talksToThumbd } from './doc-examples.ts'

/** What each file an example names is made of. */
const FILES: Record<string, () => Promise<Buffer>> = {
  'photo.jpg': () => media('jpeg'),
  'clip.mp4': () => media('mp4-h264'),
  'clip.mov': () => media('mov'),
  'talk.webm': () => media('webm-vp8'),
  'talk.mp4': () => media('mp4-h264'),
  // A logo: a shape on transparency, as logos are.
  'logo.png': () => sharp({ create: { width: 400, height: 200, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><circle cx="200" cy="100" r="90" fill="#c03"/></svg>') }])
    .png().toBuffer()
}

/** The format each output's extension promises (sharp calls AVIF heif). */
const FORMAT_OF: Record<string, string> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'heif', gif: 'gif' }

async function assertIsWhatItsNameSays (path: string, where: string) {
  assert.ok(existsSync(path), `${where}: ${path} was written`)
  const ext = /\.(\w+)$/.exec(path)?.[1]
  if (ext === 'json') {
    assert.doesNotThrow(() => JSON.parse(readFileSync(path, 'utf8')), `${where}: ${path} is JSON`)
    return
  }
  const { format } = await sharp(path).metadata()
  if (ext !== undefined) assert.equal(format, FORMAT_OF[ext], `${where}: ${path} is ${FORMAT_OF[ext]}`)
}

test('the README and docs/api.md shell examples run as written against a real server and a loopback origin', async (t) => {
  const blocks = [...shellBlocks('README.md'), ...shellBlocks('docs/api.md')]
  const examples = blocks.filter(talksToThumbd)
  // A new block that neither talks to thumbd nor installs or deploys would go unchecked: say so here.
  assert.deepEqual(blocks.filter(b => !talksToThumbd(b) && !setsUpOrDeploys(b)).map(b => b.where), [], 'blocks neither run here nor known as set-up')
  assert.ok(examples.filter(b => b.where.startsWith('README')).length >= 3 && examples.length >= 10, `examples found: ${examples.map(b => b.where)}`)

  const dir = tempFolder('thumbd-examples-', t)
  const named = new Set(examples.flatMap(b => inputs(b.code)).filter(name => !name.startsWith('clip-sprite')))
  for (const name of named) {
    assert.ok(FILES[name] !== undefined, `an example uses ${name}: add it to FILES`)
    writeFileSync(join(dir, name), await FILES[name]!())
  }
  const origin = await startStaticServer(dir)
  t.after(() => origin.close())
  const bin = await shims(dir)

  // thumbd as `npm start` would run it from this folder: its .env, plus what lets it fetch from the loopback origin.
  let server: { app: FastifyInstance, base: string, env: string } | undefined
  t.after(() => server?.app.close())
  async function thumbd (): Promise<string> {
    const env = existsSync(join(dir, '.env')) ? readFileSync(join(dir, '.env'), 'utf8') : ''
    if (server?.env === env) return server.base
    await server?.app.close()
    const config = loadConfig({
      ...parseEnv(env),
      API_KEYS: TEST_KEY,
      LOG_LEVEL: 'silent',
      TMP_DIR: TEST_TMP,
      POOL_THREADS: '2',
      ALLOW_PRIVATE_SOURCES: 'true',
      ALLOWED_SOURCES: `${origin.base}/`
    })
    const app = await buildApp(config)
    server = { app, base: await listen(app), env }
    return server.base
  }

  for (const block of examples) {
    const code = localised(block.code, needsServer(block) ? await thumbd() : '', origin.base).replaceAll('your-key', TEST_KEY)
    for (const file of outputs(code)) rmSync(join(dir, file), { force: true })
    let ran
    try {
      ran = await runBlock(code, dir, bin, TEST_KEY)
    } catch (err) {
      const { stdout, stderr } = err as { stdout?: string, stderr?: string }
      assert.fail(`${block.where} failed: ${(err as Error).message}\n${stdout ?? ''}\n${stderr ?? ''}`)
    }
    assert.equal(ran.statuses.length, curlCalls(block.code), `${block.where}: every curl ran\n${ran.stderr}`)
    for (const status of ran.statuses) assert.ok(status >= 200 && status < 300, `${block.where}: HTTP ${status}\n${ran.stdout}\n${ran.stderr}`)
    for (const file of outputs(code)) await assertIsWhatItsNameSays(join(dir, file), block.where)
  }
  assert.ok(server !== undefined, 'some example talked to thumbd')
  assert.ok(parseEnv(readFileSync(join(dir, '.env'), 'utf8')).URL_SIGNING_KEYS?.match(/^[0-9a-f]{64}$/), 'the README made a signing key in .env')
})

test('the README stays short: at most 300 lines', () => {
  assert.ok(readFileSync(new URL('../../README.md', import.meta.url), 'utf8').split('\n').length <= 300)
})
