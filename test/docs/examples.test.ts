// The README's and docs/api.md's shell examples run against a real thumbd and a loopback origin, so that they
// cannot drift from what the server does: every curl gets a 2xx, every file an example writes is what its name
// says (thumb.webp is a WebP), and the signed GET URL is signed from .env as the README makes it. The .env starts
// as a copy of .env.example, as the README says; the README's own settings for its loopback origin are what let
// thumbd fetch from it once it writes them, and its <img> page's image is served.
import assert from 'node:assert/strict'
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
import { ROOT, curlCalls, failsSilently, inputs, localised, needsServer, outputs, pages, runBlock, setsUpOrDeploys, shellBlocks, shims, talksToThumbd } from './doc-examples.ts'

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

test('the README and docs/api.md shell examples run as written against a real server and a loopback origin', { timeout: 900_000 }, async (t) => {
  const blocks = [...shellBlocks('README.md'), ...shellBlocks('docs/api.md')]
  const examples = blocks.filter(talksToThumbd)
  // A new block that neither talks to thumbd nor installs or deploys would go unchecked: say so here.
  assert.deepEqual(blocks.filter(b => !talksToThumbd(b) && !setsUpOrDeploys(b)).map(b => b.where), [], 'blocks neither run here nor known as set-up')
  assert.ok(examples.filter(b => b.where.startsWith('README')).length >= 3 && examples.length >= 10, `examples found: ${examples.map(b => b.where)}`)
  // An example that fails must show thumbd's message: no -f/--fail, which hides it (exit 22, no output).
  assert.deepEqual(blocks.filter(b => failsSilently(b.code)).map(b => b.where), [], 'curl -f hides the error message: use --fail-with-body')

  const dir = tempFolder('thumbd-examples-', t)
  const named = new Set(examples.flatMap(b => inputs(b.code)).filter(name => !name.startsWith('clip-sprite')))
  for (const name of named) {
    assert.ok(FILES[name] !== undefined, `an example uses ${name}: add it to FILES`)
    writeFileSync(join(dir, name), await FILES[name]!())
  }
  // The newcomer's .env: a copy of .env.example, to which the README's steps append.
  copyFileSync(join(ROOT, '.env.example'), join(dir, '.env'))
  const origin = await startStaticServer(dir)
  t.after(() => origin.close())
  const bin = await shims(dir)

  // thumbd as `npm start` would run it from this folder: its .env, plus, until the README's recipe writes its own
  // settings for a loopback origin, what lets it fetch from the one that stands in for example.com.
  let server: { app: FastifyInstance, base: string, env: string } | undefined
  t.after(() => server?.app.close())
  async function thumbd (): Promise<string> {
    const env = existsSync(join(dir, '.env')) ? readFileSync(join(dir, '.env'), 'utf8') : ''
    if (server?.env === env) return server.base
    await server?.app.close()
    const settings = parseEnv(env)
    const config = loadConfig({
      ...settings,
      API_KEYS: TEST_KEY,
      LOG_LEVEL: 'silent',
      TMP_DIR: TEST_TMP,
      POOL_THREADS: '2',
      // Busy machines: the examples' jobs must not be shed; what is checked is what they answer.
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      MAX_QUEUE_WAIT_MS: '60000',
      ...(settings.ALLOWED_SOURCES === undefined ? { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${origin.base}/` } : {})
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
    // A page's images, fetched as a browser opening it would (no key: GET URLs only), are images.
    for (const page of pages(code)) {
      const sources = [...readFileSync(join(dir, page), 'utf8').matchAll(/<img src="([^"]+)"/g)].map(m => m[1]!)
      assert.ok(sources.length > 0, `${block.where}: ${page} has an <img>`)
      for (const src of sources) {
        const res = await fetch(src)
        assert.equal(res.status, 200, `${block.where}: ${src}: ${res.status}`)
        const { format, width, height } = await sharp(Buffer.from(await res.arrayBuffer())).metadata()
        assert.deepEqual([format, width, height], ['webp', 300, 200], `${block.where}: ${src}`)
      }
    }
  }
  assert.ok(examples.some(b => pages(b.code).length > 0), 'the README\'s recipe wrote an <img> page')
  assert.ok(server !== undefined, 'some example talked to thumbd')
  const env = readFileSync(join(dir, '.env'), 'utf8')
  assert.ok(parseEnv(env).URL_SIGNING_KEYS?.match(/^[0-9a-f]{64}$/), 'the README made a signing key in .env')
  assert.equal(parseEnv(env).ALLOWED_SOURCES, `${origin.base}/`, 'the README\'s recipe set its loopback origin in .env')
  // .env.example copied, then the README's steps appended: each variable set once.
  const names = [...env.matchAll(/^([A-Z_]+)=/gm)].map(m => m[1]!)
  assert.deepEqual(names.filter((name, i) => names.indexOf(name) !== i), [], 'no variable set twice in .env')
})

test('the README stays short: at most 300 lines', () => {
  assert.ok(readFileSync(new URL('../../README.md', import.meta.url), 'utf8').split('\n').length <= 300)
})
