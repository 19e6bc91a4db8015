// node load/imgproxy-parity.ts [--peer PATH] [--only WORD] [--save DIR]: the same signed GET URLs to thumbd and to imgproxy,
// on media made here (alpha PNGs, EXIF-rotated portraits, animated GIF/WebP, grey and CMYK JPEGs, a 16-bit
// PNG, a photo for the smart crop), served from a loopback origin. Prints one row per URL: each side's status,
// type, size and frames, their bytes, and the mean difference of their pixels (0-255, RGBA, every frame) where
// the sizes match; --save keeps both replies and the media in DIR. Run by hand (not in CI); imgproxy is built by the user (docs/benchmarks.md, "Photos against imgproxy").
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { signImgproxyPath } from './imgproxy-url.ts'
import { freePort, startServer } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

const CMYK_ICC = process.env.CMYK_ICC ?? '/work/peers/cmyk.icc'

const run = (cmd: string, args: string[]) => new Promise<void>((resolve, reject) => {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  child.on('error', reject).on('exit', code => code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`)))
})

/** The media compared, written into dir. */
async function makeMedia (dir: string): Promise<void> {
  const photo = join(dir, 'photo.jpg')
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x400', '-frames:v', '1', '-q:v', '2', photo])
  // A soft-edged disc of half-transparent red over a transparent field, a blue bar opaque.
  const disc = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400"><defs><radialGradient id="g"><stop offset="0" stop-color="#f00" stop-opacity="0.9"/><stop offset="1" stop-color="#f00" stop-opacity="0"/></radialGradient></defs><circle cx="420" cy="200" r="180" fill="url(#g)"/><rect x="20" y="20" width="120" height="360" fill="#00f"/></svg>')
  await sharp(disc).png().toFile(join(dir, 'alpha.png'))
  // Portraits stored turned, with the EXIF orientation that shows them upright (3: 180°, 6: 90° cw, 8: 90° ccw).
  for (const [orientation, turn] of [[3, 180], [6, 270], [8, 90]] as const) {
    await sharp(photo).rotate(90).rotate(turn).withMetadata({ orientation }).jpeg({ quality: 90 }).toFile(join(dir, `exif-${orientation}.jpg`))
  }
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=5:duration=1', '-loop', '0', join(dir, 'anim.gif')])
  await sharp(join(dir, 'anim.gif'), { pages: -1 }).webp({ quality: 90, loop: 0 }).toFile(join(dir, 'anim.webp'))
  await sharp(photo).greyscale().jpeg({ quality: 90 }).toFile(join(dir, 'grey.jpg'))
  await sharp(photo).toColourspace('cmyk').jpeg({ quality: 90 }).toFile(join(dir, 'cmyk.jpg'))
  // A CMYK JPEG with its profile embedded (/work/peers/cmyk.icc where the peer build left one).
  await sharp(photo).withIccProfile(CMYK_ICC).jpeg({ quality: 90 }).toFile(join(dir, 'cmyk-icc.jpg')).catch(() => undefined)
  await sharp(photo).toColourspace('rgb16').png().toFile(join(dir, 'png16.png'))
  // A photo whose salient part (a saturated disc) is off-centre, for g:sm.
  const spot = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="400"><rect width="800" height="400" fill="#777"/><circle cx="640" cy="120" r="70" fill="#e33"/></svg>')
  await sharp(spot).jpeg({ quality: 90 }).toFile(join(dir, 'spot.jpg'))
}

/** file, then the option paths and extensions asked of it. */
const CASES: [string, string[], string[]][] = [
  ['alpha.png', ['rs:fit:300:300', 'rs:fit:300:300/bg:ffffff', 'rs:fill:200:200/bg:00ff00'], ['@jpg', '@png', '@webp']],
  ...[3, 6, 8].map(o => [`exif-${o}.jpg`, ['rs:fit:200:200', 'rs:fill:150:150', 'rs:fit:200:200/ar:0'], ['@jpg']] as [string, string[], string[]]),
  ...['anim.gif', 'anim.webp'].map(file => [file, ['rs:fit:160:160', 'rs:fill:100:100', 'c:160:120:nowe', 'rot:90/w:120', 'fl:1:1/w:120', 'rs:fill:100:100/g:sm'], ['@gif', '@webp', '@png']] as [string, string[], string[]]),
  ['grey.jpg', ['rs:fit:200:200'], ['@jpg', '@png', '@webp']],
  ['cmyk.jpg', ['rs:fit:200:200'], ['@jpg', '@png', '@webp']],
  ['cmyk-icc.jpg', ['rs:fit:200:200'], ['@png']],
  ['png16.png', ['rs:fit:200:200'], ['@png', '@jpg']],
  ['spot.jpg', ['rs:fill:200:200/g:sm', 'rs:fill:100:300/g:sm'], ['@png']]
]

interface Side { status: number, type: string, bytes: number, body: Buffer, width?: number, height?: number, pages?: number }

async function ask (url: string): Promise<Side> {
  const res = await fetch(url)
  const body = Buffer.from(await res.arrayBuffer())
  const side: Side = { status: res.status, type: res.headers.get('content-type') ?? '', bytes: body.length, body }
  if (res.status !== 200) return side
  const meta = await sharp(body, { pages: -1 }).metadata()
  return { ...side, width: meta.width, height: meta.pageHeight ?? meta.height, pages: meta.pages ?? 1 }
}

/** Mean absolute difference of every RGBA sample of every frame, or undefined where the shapes differ. */
async function meanDifference (a: Side, b: Side): Promise<number | undefined> {
  if (a.status !== 200 || a.width !== b.width || a.height !== b.height || a.pages !== b.pages) return undefined
  const [x, y] = await Promise.all([a, b].map(s => sharp(s.body, { pages: -1 }).ensureAlpha().raw().toBuffer()))
  let sum = 0
  for (let i = 0; i < x!.length; i++) sum += Math.abs(x![i]! - y![i]!)
  return sum / x!.length
}

async function startImgproxy (binary: string, key: string, salt: string) {
  const port = await freePort()
  const child = spawn(binary, [], {
    // Animations processed (imgproxy's default keeps 1 frame); its qualities are thumbd's FORMAT_QUALITY defaults.
    env: { PATH: process.env.PATH, IMGPROXY_BIND: `127.0.0.1:${port}`, IMGPROXY_KEY: key, IMGPROXY_SALT: salt, IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES: 'true', IMGPROXY_LOG_LEVEL: 'error', IMGPROXY_MAX_ANIMATION_FRAMES: '100' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${base}/health`).then(r => r.ok, () => false)); i++) {
    if (i > 300 || child.exitCode !== null) throw new Error(`imgproxy (${binary}) did not start`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return { base, stop: async () => { if (child.exitCode === null) { const exited = once(child, 'exit'); child.kill('SIGTERM'); await exited } } }
}

const describe = (s: Side) => s.status !== 200 ? `${s.status}` : `${s.type.replace('image/', '')} ${s.width}x${s.height}${s.pages! > 1 ? `x${s.pages}` : ''}`

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { peer: { type: 'string', default: '/work/peers/bin/imgproxy' }, only: { type: 'string' }, save: { type: 'string' } } })
  const dir = await mkdtemp(join(tmpdir(), 'parity-'))
  const [key, salt] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]
  const statics = await startStaticServer(dir)
  let thumbd: Awaited<ReturnType<typeof startServer>> | undefined
  let peer: Awaited<ReturnType<typeof startImgproxy>> | undefined
  try {
    await makeMedia(dir)
    if (values.save !== undefined) await run('cp', ['-r', `${dir}/.`, values.save])
    thumbd = await startServer({ URL_SIGNING_KEYS: key, URL_SIGNING_SALTS: salt, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/` })
    peer = await startImgproxy(values.peer!, key, salt)
    console.log('| source | URL options | thumbd | imgproxy | bytes (thumbd / imgproxy) | mean diff |')
    console.log('|---|---|---|---|---|---|')
    for (const [file, optionSets, extensions] of CASES) {
      for (const options of optionSets) {
        for (const ext of extensions) {
          if (values.only !== undefined && !`${file}/${options}${ext}`.includes(values.only)) continue
          const path = `/${options}/plain/${statics.base}/${file}${ext}`
          const signed = `/${signImgproxyPath(path, key, salt)}${path}`
          const [ours, theirs] = [await ask(`${thumbd.base}/i${signed}`), await ask(`${peer.base}${signed}`)]
          const diff = await meanDifference(ours, theirs)
          if (values.save !== undefined) {
            const name = `${file}-${options}${ext}`.replace(/[^\w.@-]/g, '_')
            await Promise.all([writeFile(join(values.save, `thumbd-${name}`), ours.body), writeFile(join(values.save, `imgproxy-${name}`), theirs.body)])
          }
          const ratio = ours.status === 200 && theirs.status === 200 ? ` (${(ours.bytes / theirs.bytes).toFixed(2)})` : ''
          console.log(`| ${file} | ${options}${ext} | ${describe(ours)} | ${describe(theirs)} | ${ours.bytes} / ${theirs.bytes}${ratio} | ${diff === undefined ? '-' : diff.toFixed(2)} |`)
        }
      }
    }
  } finally {
    await thumbd?.stop()
    await peer?.stop()
    await statics.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
