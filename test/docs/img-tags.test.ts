// docs/examples/img-tags.html in a real browser (Debian's Chromium, headless): every <img> pointing at
// thumbd's GET URLs decodes, at the size its URL asks for.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startStaticServer } from '../../load/static-server.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'
import { listen } from '../faults/helpers.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const PAGE = fileURLToPath(new URL('../../docs/examples/img-tags.html', import.meta.url))

test('the <img> example page: every image decodes in headless Chromium, at the width its URL asks for', async (t) => {
  const dir = tempFolder('thumbd-page-', t)
  writeFileSync(join(dir, 'photo.jpg'), await media('jpeg-large'))
  writeFileSync(join(dir, 'clip.mp4'), await media('mp4-h264'))
  const photos = await startStaticServer(dir)
  t.after(() => photos.close())
  const app = await build(t, { ALLOW_UNSIGNED_URLS: 'true', ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${photos.base}/` })
  const thumbd = await listen(app)
  // The page as a person would open it, with this run's addresses for thumbd and the photos.
  const page = readFileSync(PAGE, 'utf8').replaceAll('http://localhost:3000', thumbd).replaceAll('http://127.0.0.1:8081', photos.base)
  writeFileSync(join(dir, 'page.html'), page)
  // Opened as a file, as a person opens it (the photo server would send it as a download).
  const { stdout } = await run('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--virtual-time-budget=20000', '--dump-dom', `file://${join(dir, 'page.html')}`], { timeout: 60_000, maxBuffer: 1 << 24 })
  const decoded = /data-decoded="([^"]*)"/.exec(stdout)?.[1]
  assert.equal(decoded, '320,200,240,240', 'the decoded widths of the four images')
})

test('the <img> example page says on the page itself, not only in a comment, what thumbd it needs', () => {
  const body = /<body>([\s\S]*)<\/body>/.exec(readFileSync(PAGE, 'utf8').replace(/<!--[\s\S]*?-->/g, ''))?.[1] ?? ''
  const visible = body.replace(/<script>[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, '')
  assert.match(visible, /ALLOW_UNSIGNED_URLS=true/)
  assert.match(visible, /npm run sign-url/)
})
