// node load/jpeg-cpu.ts [--width N] [--format jpeg|webp] [--rounds R] [--repeat N] [--url] [--modes a,b] PHOTO...
// CPU per thumbnail in one thread, as a pool thread renders it (workers/image/image.ts), for each JPEG decode:
// sharp's (JPEG_DECODER=sharp), libturbojpeg's at sharp's scale (turbojpeg) and at imgproxy's
// (turbojpeg with JPEG_SHRINK=imgproxy). Alternating rounds; prints each round and the medians' ratios.
// --modes: only those (sharp, turbojpeg, turbojpeg+imgproxy); ratios against the first.
// --url: the options a GET URL's rs:fit:N:0/q:80 gives the job (imgproxy's sizing), else /api's.
// The direct JPEG encode (workers/image/jpeg-direct.ts) needs TJ_OPTIMIZE=1 in the environment, as the server sets it.
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { render } from '../workers/image/image.ts'
import type { JobContext, JobSettings, OutputFormat } from '../contract/types.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { width: { type: 'string', default: '320' }, format: { type: 'string', default: 'jpeg' }, rounds: { type: 'string', default: '3' }, repeat: { type: 'string', default: '15' }, url: { type: 'boolean', default: false }, modes: { type: 'string' } }
})
sharp.concurrency(1)
const every = { sharp: ['sharp', 'quality'], turbojpeg: ['turbojpeg', 'quality'], 'turbojpeg+imgproxy': ['turbojpeg', 'imgproxy'] } as const
const chosen = values.modes?.split(',') ?? Object.keys(every)
const modes = Object.fromEntries(Object.entries(every).filter(([name]) => chosen.includes(name)))
const cpuMs = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000 }
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!

for (const file of positionals) {
  const bytes = readFileSync(file)
  const figures: Record<string, number[]> = {}
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, [jpegDecoder, jpegShrink]] of Object.entries(modes)) {
      const ctx: JobContext = { settings: { maxInputPixels: 50_000_000, maxAnimationFrames: 100, jpegDecoder, jpegShrink } as JobSettings, signal: new AbortController().signal, deadline: Date.now() + 600_000 }
      const api = { width: Number(values.width), fit: 'cover' as const, format: values.format as OutputFormat, quality: 80, withoutEnlargement: true }
      const options = values.url ? { ...api, fit: 'inside' as const, url: { type: 'fit' as const, enlarge: false, dpr: 1, zoom: [1, 1] as [number, number] } } : api
      const once = () => render({ bytes }, options, ctx)
      await once()
      const start = cpuMs()
      for (let i = 0; i < Number(values.repeat); i++) await once()
      ;(figures[name] ??= []).push((cpuMs() - start) / Number(values.repeat))
    }
  }
  const base = median(Object.values(figures)[0]!)
  console.log(`${basename(file)}, ${values.width} px ${values.format}: ` + Object.entries(figures).map(([name, list]) => `${name} ${list.map(ms => ms.toFixed(1)).join(', ')} ms (${(median(list) / base).toFixed(2)})`).join('; '))
}
