// npm run bench:animation -- --imgproxy PATH --gifs FILE,FILE: animated GIF -> animated WebP thumbnail (320 px
// wide, quality 80), thumbd (POST JSON URL to /api/thumbnail) against imgproxy (its signed GET URL,
// IMGPROXY_MAX_ANIMATION_FRAMES high), on the same GIFs from one loopback static server. Alternating rounds of
// `count` requests, two at a time (one per core here), each contender alone on the machine during its round.
// Prints each GIF's throughput ratio (thumbd / imgproxy) and output sizes (thumbd / imgproxy).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { signImgproxyPath } from './imgproxy-url.ts'
import { freePort, startServer, warmCompileCache } from './server-process.ts'
import { startStaticServer } from './static-server.ts'

const { values } = parseArgs({ options: { imgproxy: { type: 'string' }, gifs: { type: 'string' }, count: { type: 'string', default: '20' }, repeats: { type: 'string', default: '3' } } })
if (values.imgproxy === undefined || values.gifs === undefined) throw new Error('usage: --imgproxy PATH --gifs FILE,FILE [--count 20] [--repeats 3]')
const [count, repeats] = [Number(values.count), Number(values.repeats)]
const say = (line: string) => process.stderr.write(`${line}\n`)

const dir = await mkdtemp(join(tmpdir(), 'thumbd-anim-bench-'))
const gifs = values.gifs.split(',')
for (const gif of gifs) await copyFile(gif, join(dir, basename(gif)))
const statics = await startStaticServer(dir)
await warmCompileCache()
// Real GIFs run to hundreds of frames: the pixel budget (4 x MAX_INPUT_PIXELS over all frames) is raised to 240 MP.
const thumbd = await startServer({ ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/`, MAX_INPUT_PIXELS: '60000000', JOB_TIMEOUT_MS: '120000' })
const [key, salt, port] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex'), await freePort()]
const imgproxy = spawn(values.imgproxy, [], {
  env: { PATH: process.env.PATH, IMGPROXY_BIND: `127.0.0.1:${port}`, IMGPROXY_KEY: key, IMGPROXY_SALT: salt, IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES: 'true', IMGPROXY_LOG_LEVEL: 'error', IMGPROXY_MAX_ANIMATION_FRAMES: '10000', IMGPROXY_MAX_SRC_RESOLUTION: '1000', IMGPROXY_WRITE_TIMEOUT: '120', IMGPROXY_TIMEOUT: '120' },
  stdio: ['ignore', 'ignore', 'inherit']
})
const imgproxyBase = `http://127.0.0.1:${port}`
for (let i = 0; !(await fetch(`${imgproxyBase}/health`).then(r => r.ok, () => false)); i++) {
  if (i > 300 || imgproxy.exitCode !== null) throw new Error('imgproxy did not start')
  await new Promise(resolve => setTimeout(resolve, 100))
}

type Contender = 'thumbd' | 'imgproxy'
function ask (who: Contender, source: string): Promise<Response> {
  if (who === 'thumbd') {
    return fetch(`${thumbd.base}/api/thumbnail`, { method: 'POST', headers: { authorization: `Bearer ${thumbd.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: source, width: 320, format: 'webp', quality: 80 }) })
  }
  const path = `/rs:fit:320:0/q:80/plain/${source}@webp`
  return fetch(`${imgproxyBase}/${signImgproxyPath(path, key, salt)}${path}`)
}

/** `count` requests, two at a time: requests per second, and the last reply's bytes. */
async function round (who: Contender, source: string): Promise<{ perSecond: number, reply: Buffer }> {
  let next = 0
  let reply = Buffer.alloc(0)
  const started = performance.now()
  await Promise.all([0, 1].map(async () => {
    while (next++ < count) {
      const res = await ask(who, source)
      const body = Buffer.from(await res.arrayBuffer())
      if (res.status !== 200) throw new Error(`${who} ${source}: ${res.status} ${body.toString().slice(0, 200)}`)
      reply = body
    }
  }))
  return { perSecond: count / ((performance.now() - started) / 1000), reply }
}

const lines = ['| GIF | frames | thumbd / imgproxy, thumbnails per second | thumbd / imgproxy, bytes | thumbd frames out |', '|---|---:|---:|---:|---:|']
try {
  for (const gif of gifs) {
    const source = `${statics.base}/${basename(gif)}`
    const meta = await sharp(gif).metadata()
    const rates: Record<Contender, number[]> = { thumbd: [], imgproxy: [] }
    const sizes: Record<Contender, number> = { thumbd: 0, imgproxy: 0 }
    let framesOut = 0
    await round('thumbd', source) // warm both
    await round('imgproxy', source)
    for (let r = 0; r < repeats; r++) {
      for (const who of (r % 2 === 0 ? ['thumbd', 'imgproxy'] : ['imgproxy', 'thumbd']) as Contender[]) {
        const { perSecond, reply } = await round(who, source)
        rates[who].push(perSecond)
        sizes[who] = reply.length
        if (who === 'thumbd') framesOut = (await sharp(reply, { pages: -1 }).metadata()).pages ?? 1
        say(`${basename(gif)} round ${r + 1} ${who}: ${perSecond.toFixed(2)}/s, ${reply.length} bytes`)
      }
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!
    lines.push(`| ${basename(gif)} (${meta.width}x${meta.height}) | ${meta.pages} | ${(median(rates.thumbd) / median(rates.imgproxy)).toFixed(2)} (${median(rates.thumbd).toFixed(2)} vs ${median(rates.imgproxy).toFixed(2)}/s) | ${(sizes.thumbd / sizes.imgproxy).toFixed(3)} (${sizes.thumbd} vs ${sizes.imgproxy}) | ${framesOut} |`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  imgproxy.kill()
  await thumbd.stop()
  await statics.close()
  await rm(dir, { recursive: true, force: true })
}
