// URLs built by imgproxy's official Node client (@imgproxy/imgproxy-node with @imgproxy/imgproxy-js-core),
// one per option thumbd supports, against thumbd over its routes: the status, type and size imgproxy gives,
// and where practical the pixels of the same steps made with sharp (PNG output, so they compare exactly).
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { generateImageUrl } from '@imgproxy/imgproxy-node'
import sharp, { type Sharp } from 'sharp'
import { build, decoded } from '../helper.ts'

const KEY = '943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881'
const SALT = '520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5'

type Options = Parameters<typeof generateImageUrl>[0]['options']
interface Case { options: Options, file?: string, status?: number, type?: string, size?: [number, number], reference?: (source: Sharp) => Sharp, check?: (body: Buffer, headers: Record<string, unknown>) => Promise<void> | void }

test('URLs from imgproxy\'s Node client, one per supported option: status, type, size and pixels', async (t) => {
  const landscape = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 90 }).toBuffer()
  const half = await sharp({ create: { width: 320, height: 400, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } }).png().toBuffer()
  const alpha = await sharp({ create: { width: 640, height: 400, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).composite([{ input: half, left: 0, top: 0 }]).png().toBuffer()
  const files: Record<string, Buffer> = { 'a.jpg': landscape, 'alpha.png': alpha }
  const origin = createServer((req, res) => res.end(files[req.url!.slice(1)]))
  await new Promise<void>(resolve => origin.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => origin.close(resolve)))
  const src = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  // Pixels are checked against sharp's own steps: JPEGs decode at sharp's scale, not GET URLs' default (imgproxy's).
  const app = await build(t, { URL_SIGNING_KEYS: KEY, URL_SIGNING_SALTS: SALT, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${src}/`, JPEG_SHRINK: 'quality' })
  const now = Math.floor(Date.now() / 1000)
  const webpBytes = (quality: number) => sharp(landscape).resize(320).webp({ quality }).toBuffer().then(b => b.length)

  const cases: Record<string, Case> = {
    'resize fit': { options: { resize: { resizing_type: 'fit', width: 320, height: 0 }, format: 'png' }, size: [320, 200], reference: s => s.resize(320, 200, { fit: 'fill' }) },
    'resize force, smaller source': { options: { resize: { resizing_type: 'force', width: 1000, height: 300 } }, type: 'image/jpeg', size: [640, 192] },
    'size with enlarge': { options: { size: { width: 1280, height: 0, enlarge: 1 } }, size: [1280, 800] },
    'resizing_type fill-down, width, height': { options: { resizing_type: 'fill-down', width: 1000, height: 1000 }, size: [400, 400] },
    'resizing_type auto': { options: { resize: { resizing_type: 'auto', width: 300, height: 200 } }, size: [300, 200] },
    'width and height': { options: { width: 100, height: 50 }, size: [80, 50] },
    enlarge: { options: { width: 1280, enlarge: 1 }, size: [1280, 800] },
    dpr: { options: { width: 160, dpr: 2, format: 'png' }, size: [320, 200], reference: s => s.resize(320, 200, { fit: 'fill' }) },
    zoom: { options: { zoom: 0.5 }, size: [320, 200] },
    min_width: { options: { height: 50, min_width: 320 }, size: [320, 50] },
    min_height: { options: { width: 100, min_height: 100 }, size: [100, 100] },
    'gravity with offsets': { options: { resize: { resizing_type: 'fill', width: 200, height: 200 }, gravity: { type: 'ea', x_offset: 20, y_offset: 0 }, format: 'png' }, size: [200, 200], reference: s => s.resize(320, 200, { fit: 'fill' }).extract({ left: 100, top: 0, width: 200, height: 200 }) },
    'gravity focus point': { options: { resize: { resizing_type: 'fill', width: 200, height: 200 }, gravity: { type: 'fp', x: 0.75, y: 0.5 }, format: 'png' }, size: [200, 200], reference: s => s.resize(320, 200, { fit: 'fill' }).extract({ left: 120, top: 0, width: 200, height: 200 }) },
    crop: { options: { crop: { width: 320, height: 200, gravity: { type: 'nowe' } }, format: 'png' }, size: [320, 200], reference: s => s.extract({ left: 0, top: 0, width: 320, height: 200 }) },
    extend: { options: { resize: { resizing_type: 'fit', width: 800, height: 800 }, extend: { extend: 1 }, background: '00ff00', format: 'png' }, size: [800, 800], reference: s => s.extend({ top: 200, bottom: 200, left: 80, right: 80, background: '#00ff00' }) },
    extend_aspect_ratio: { options: { resize: { resizing_type: 'fit', width: 400, height: 400 }, extend_aspect_ratio: { extend: 1 } }, size: [400, 400] },
    padding: { options: { padding: { top: 10, right: 20 }, background: 'ff0000', format: 'png' }, size: [680, 420], reference: s => s.extend({ top: 10, bottom: 10, left: 20, right: 20, background: '#ff0000' }) },
    rotate: { options: { rotate: 90, format: 'png' }, size: [400, 640], reference: s => s.rotate(90) },
    flip: { options: { flip: { horizontal: 1, vertical: 0 }, format: 'png' }, size: [640, 400], reference: s => s.flop() },
    blur: { options: { blur: 2, format: 'png' }, size: [640, 400], reference: s => s.blur(2) },
    sharpen: { options: { sharpen: 1, format: 'png' }, size: [640, 400], reference: s => s.sharpen({ sigma: 1, m1: 0, m2: 3 }) },
    'background on a PNG': { options: { background: 'ff0000', width: 320 }, file: 'alpha.png', type: 'image/png', size: [320, 200], check: async body => assert.equal((await decoded(body)).hasAlpha, false) },
    'strip_metadata, auto_rotate, cachebuster': { options: { strip_metadata: 1, auto_rotate: 1, cachebuster: 'v2', width: 100 }, size: [100, 63] },
    'expires in the future': { options: { expires: now + 600, width: 100 }, size: [100, 63] },
    'expires in the past': { options: { expires: now - 10, width: 100 }, status: 404 },
    'filename and return_attachment': { options: { filename: { name: 'holiday' }, return_attachment: 1, width: 100 }, check: (_body, headers) => assert.equal(headers['content-disposition'], 'attachment; filename="holiday.jpg"') },
    quality: { options: { quality: 70, width: 320, format: 'webp' }, type: 'image/webp', check: async body => assert.equal(body.length, await webpBytes(70)) },
    format_quality: { options: { format_quality: [{ format: 'webp', quality: 50 }], width: 320, format: 'webp' }, check: async body => assert.equal(body.length, await webpBytes(50)) },
    'default webp quality (79)': { options: { width: 320, format: 'webp' }, check: async body => assert.equal(body.length, await webpBytes(79)) },
    max_bytes: { options: { max_bytes: 20000, quality: 95, format: 'jpg' }, size: [640, 400], check: body => assert.ok(body.length <= 20000, String(body.length)) },
    'video_thumbnail_second on an image': { options: { video_thumbnail_second: 1, width: 100 }, size: [100, 63] },
    // The client writes skip_processing as "sp", which imgproxy does not know either (it reads skp/skip_processing).
    'skip_processing (written sp by the client)': { options: { skip_processing: ['jpg'] }, status: 400 }
  }

  for (const [name, c] of Object.entries(cases)) {
    const url = generateImageUrl({ endpoint: 'http://thumbd.invalid/i', url: `${src}/${c.file ?? 'a.jpg'}`, options: c.options, key: KEY, salt: SALT })
    const res = await app.inject({ url: new URL(url).pathname })
    assert.equal(res.statusCode, c.status ?? 200, `${name} (${url}): ${res.body.slice(0, 200)}`)
    if (res.statusCode !== 200) continue
    if (c.type !== undefined) assert.equal(res.headers['content-type'], c.type, name)
    const meta = await decoded(res.rawPayload)
    if (c.size !== undefined) assert.deepEqual([meta.width, meta.height], c.size, name)
    if (c.reference !== undefined) {
      const [got, want] = await Promise.all([sharp(res.rawPayload).raw().toBuffer(), c.reference(sharp(files[c.file ?? 'a.jpg'])).png().toBuffer().then(b => sharp(b).raw().toBuffer())])
      assert.ok(got.equals(want), `${name}: the pixels of the same steps in sharp`)
    }
    await c.check?.(res.rawPayload, res.headers)
  }
})
