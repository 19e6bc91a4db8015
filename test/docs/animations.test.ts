// docs/examples/animations.html in a real browser (Debian's Chromium, headless): every <img> decodes at the
// width its URL asks for, and the animated ones really move: screenshots taken at different times differ in
// their boxes (one page load, screenshots over the DevTools protocol), while the still first frame (da:1) stays.
import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import sharp from 'sharp'
import { startStaticServer } from '../../load/static-server.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'
import { listen } from '../faults/helpers.ts'
import { tempFolder } from '../temp-folder.ts'
import { openPage } from './chromium-session.ts'

const PAGE = fileURLToPath(new URL('../../docs/examples/animations.html', import.meta.url))
/** Screenshots this far apart show other frames: the GIF loops in 1 s (5 x 200 ms), the preview in 2.4 s (8 x 300 ms). */
const SHOT_INTERVAL_MS = 450
const SHOTS = 4

interface Shown { id: string, naturalWidth: number, box: [number, number, number, number] }

test('the animations page: every image decodes in headless Chromium, and the GIF, the WebP and the video preview move', async (t) => {
  const dir = tempFolder('thumbd-page-', t)
  writeFileSync(join(dir, 'anim.gif'), await media('gif'))
  writeFileSync(join(dir, 'clip.mp4'), await media('long-mp4'))
  const files = await startStaticServer(dir)
  t.after(() => files.close())
  const app = await build(t, { ALLOW_UNSIGNED_URLS: 'true', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${files.base}/` })
  const thumbd = await listen(app)
  const page = readFileSync(PAGE, 'utf8').replaceAll('http://localhost:3000', thumbd).replaceAll('http://127.0.0.1:8081', files.base)
  writeFileSync(join(dir, 'page.html'), page)
  const chromium = await openPage(`file://${join(dir, 'page.html')}`, { profile: join(dir, 'profile') })
  // Its profile goes only once it has exited: a Chromium still shutting down writes it again.
  t.after(async () => {
    await chromium.close()
    rmSync(dir, { recursive: true, force: true })
  })

  let decoded: unknown
  for (const started = Date.now(); decoded === undefined && Date.now() - started < 30_000; await sleep(200)) {
    decoded = await chromium.evaluate('document.body?.dataset.decoded')
  }
  const shown = JSON.parse(String(decoded)) as Shown[]
  assert.deepEqual(shown.map(s => [s.id, s.naturalWidth]), [['gif', 240], ['webp', 160], ['still', 160], ['preview', 240]], 'each image decoded at its width')

  const shots: Buffer[] = []
  for (let i = 0; i < SHOTS; i++, await sleep(SHOT_INTERVAL_MS)) shots.push(await chromium.screenshot())
  const region = (shot: Buffer, id: string) => {
    const [left, top, width, height] = shown.find(s => s.id === id)!.box
    return sharp(shot).extract({ left, top, width, height }).raw().toBuffer()
  }
  for (const id of ['gif', 'webp', 'preview', 'still']) {
    const views = await Promise.all(shots.map(shot => region(shot, id)))
    const distinct = new Set(views.map(v => v.toString('base64'))).size
    if (id === 'still') assert.equal(distinct, 1, 'the still first frame does not move')
    else assert.ok(distinct > 1, `${id} shows different frames at different times`)
  }
})
