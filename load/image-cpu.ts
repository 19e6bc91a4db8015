// node load/image-cpu.ts [--before DIR [--before-image-decoder I]] [--image-decoder I] [--decoder D] [--count N] [--rounds R] [--width W] [--formats jpeg,png,...]:
// CPU per photo thumbnail, per input format (JPEG, PNG, WebP, GIF, AVIF), of this tree's server with
// IMAGE_DECODER=I (default sandbox, the opt-in being measured: every still in the decoder sandbox) and
// JPEG_DECODER=D (default turbojpeg) against this tree with the defaults (IMAGE_DECODER=in-process,
// JPEG_DECODER=turbojpeg), or against another tree's server with its own defaults (--before: a checkout of the
// branch to compare with; --before-image-decoder sets its IMAGE_DECODER, to compare two trees' sandboxes), in
// alternating rounds, one pool thread each. `--image-decoder in-process --decoder
// sandbox` measures the JPEG-only opt-in. The CPU is the server's and its
// descendants' (the zygotes and the decoders they fork, reaped ones included): /proc stat utime+stime+cutime+cstime.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { startServer, type ServerHandle } from './server-process.ts'

const { values } = parseArgs({ options: { before: { type: 'string' }, count: { type: 'string', default: '40' }, rounds: { type: 'string', default: '3' }, width: { type: 'string', default: '320' }, formats: { type: 'string', default: 'jpeg,png,webp,gif,avif' }, decoder: { type: 'string', default: 'turbojpeg' }, 'image-decoder': { type: 'string', default: 'sandbox' }, 'before-image-decoder': { type: 'string' } } })

/** A photo-like 3000x2000 picture (ffmpeg's testsrc2 with noise), in each format; GIF at 1000x667. */
async function photos (): Promise<Record<string, Buffer>> {
  const png = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=3000x2000:rate=1', '-frames:v', '1', '-vf', 'noise=alls=20:allf=u', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'], { maxBuffer: 1 << 28 })
  const image = () => sharp(png)
  return {
    jpeg: await image().jpeg({ quality: 90 }).toBuffer(),
    png: await image().png().toBuffer(),
    webp: await image().webp({ quality: 85 }).toBuffer(),
    gif: await image().resize(1000).gif().toBuffer(),
    avif: await image().avif({ quality: 60, effort: 2 }).toBuffer()
  }
}

function ticks (pid: string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
}

/** CPU ms of the server and every live descendant (reaped ones are in their parent's cutime/cstime). */
function treeCpuMs (root: number): number {
  const parents = new Map<string, string>()
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try { parents.set(pid, readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]!) } catch {}
  }
  const inTree = (pid: string): boolean => pid === String(root) || (parents.has(pid) && pid !== '1' && inTree(parents.get(pid)!))
  let total = 0
  for (const pid of parents.keys()) if (inTree(pid)) try { total += ticks(pid) } catch {}
  return total * 10
}

const files = Object.fromEntries(Object.entries(await photos()).filter(([format]) => values.formats.split(',').includes(format)))
const here = join(import.meta.dirname, '..', 'src', 'server.ts')
// The sandbox is opt-in: without naming it, this tree would measure the default against itself.
const trees: Record<string, { entry: string, env: Record<string, string> }> = {
  before: values.before === undefined ? { entry: here, env: { JPEG_DECODER: 'turbojpeg', IMAGE_DECODER: 'in-process' } } : { entry: join(values.before, 'src', 'server.ts'), env: values['before-image-decoder'] === undefined ? {} : { IMAGE_DECODER: values['before-image-decoder'] } },
  after: { entry: here, env: { JPEG_DECODER: values.decoder, IMAGE_DECODER: values['image-decoder'] } }
}
const servers: Record<string, ServerHandle> = {}
for (const [name, { entry, env }] of Object.entries(trees)) servers[name] = await startServer({ POOL_THREADS: '1', ...env }, entry)
const figures: Record<string, Record<string, number[]>> = {}
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [format, body] of Object.entries(files)) {
      for (const [name, server] of Object.entries(servers)) {
        const post = async () => {
          const res = await fetch(`${server.base}/api/thumbnail?width=${values.width}`, { method: 'POST', body: new Uint8Array(body), headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/octet-stream' } })
          await res.arrayBuffer()
          if (res.status !== 200) throw new Error(`${name} ${format}: ${res.status}`)
        }
        await post()
        const start = treeCpuMs(server.pid)
        for (let i = 0; i < Number(values.count); i++) await post()
        ;((figures[format] ??= {})[name] ??= []).push((treeCpuMs(server.pid) - start) / Number(values.count))
      }
    }
  }
} finally {
  for (const server of Object.values(servers)) await server.stop()
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
console.log(`format  ${Object.keys(trees).map(n => `${n} ms/photo`.padStart(18)).join('')}   after/before   (rounds: ${values.rounds} × ${values.count}, width ${values.width})`)
for (const [format, byTree] of Object.entries(figures)) {
  const cells = Object.keys(trees).map(n => `${median(byTree[n]!).toFixed(1)} (${byTree[n]!.map(v => v.toFixed(0)).join(',')})`.padStart(18)).join('')
  const ratio = byTree.before === undefined ? '' : (median(byTree.after!) / median(byTree.before)).toFixed(3)
  console.log(`${format.padEnd(7)} ${cells}   ${ratio}`)
}
