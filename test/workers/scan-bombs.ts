// Legal progressive JPEGs with hundreds of scans (a scan bomb, libjpeg-turbo's LJT-01-003), made at test time.
// Each scan sends one new bit of one coefficient (so libjpeg sees no bogus progression and warns of nothing):
// the DC at Al=10 and its 10 refinements, then each AC coefficient alone, at Al=10 and its 10 refinements (704
// scans at most). jpegtran takes at most 100 scans per script, so each script of up to 100 scans (the DC's first
// scan, needed before any AC scan, and 99 others) transcodes the same plain JPEG losslessly (the same coefficients),
// and the scans are spliced after the first file's header, each with the Huffman tables written before it.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'

/** Whether jpegtran (libjpeg-turbo-progs) is here. */
export const haveJpegtran = spawnSync('jpegtran', ['-version']).status === 0

/** A plain (baseline) grey JPEG of side × side, flat: every AC coefficient zero, so an AC scan is a few EOB runs. */
export async function plainGrey (side: number): Promise<Buffer> {
  return await sharp({ create: { width: side, height: side, channels: 3, background: '#808080' } }).toColourspace('b-w').jpeg({ quality: 90 }).toBuffer()
}

/** The scans by coefficient: the DC's first and its refinements, then each AC coefficient's first and its refinements. */
function scanGroups (): string[][] {
  const bits = (i: number) => [`0: ${i} ${i} 0 10;`, ...Array.from({ length: 10 }, (_, k) => `0: ${i} ${i} ${10 - k} ${9 - k};`)]
  return Array.from({ length: 64 }, (_, i) => bits(i))
}

/** The JPEG's segments from the first DHT/SOS on: each scan with the tables before it, as [start, end) pairs. */
function scans (jpeg: Buffer): { header: Buffer, scans: Buffer[] } {
  let at = 2
  let headerEnd = -1
  let start = -1
  const out: Buffer[] = []
  while (at < jpeg.length) {
    if (jpeg[at] !== 0xff) throw new Error(`no marker at ${at}`)
    const marker = jpeg[at + 1]!
    if (marker === 0xd9) break
    if ((marker === 0xc4 || marker === 0xda) && start < 0) start = at
    if (marker === 0xc4 && headerEnd < 0) headerEnd = at
    const length = jpeg.readUInt16BE(at + 2)
    at += 2 + length
    if (marker === 0xda) {
      // Entropy-coded data: up to the next marker that is not a stuffed 0xFF00 or a restart marker.
      while (!(jpeg[at] === 0xff && jpeg[at + 1] !== 0 && (jpeg[at + 1]! < 0xd0 || jpeg[at + 1]! > 0xd7))) at++
      out.push(jpeg.subarray(start, at))
      start = -1
    }
  }
  return { header: jpeg.subarray(0, headerEnd), scans: out }
}

/** `plain` transcoded to a progressive JPEG of `count` legal scans (≤ 704). */
export function scanBomb (plain: Buffer, count: number): Buffer {
  // Scripts of whole coefficients (a refinement needs its first scan in the same script), each after the DC's first scan.
  const [dc, ...ac] = scanGroups()
  const scripts: string[][] = [dc!]
  for (const group of ac) {
    if (scripts.at(-1)!.length + group.length > (scripts.length === 1 ? 100 : 99)) scripts.push([])
    scripts.at(-1)!.push(...group)
  }
  const dir = mkdtempSync(join(tmpdir(), 'scan-bomb-'))
  try {
    writeFileSync(join(dir, 'plain.jpg'), plain)
    let header: Buffer | undefined
    const parts: Buffer[] = []
    for (const [n, script] of scripts.entries()) {
      if (parts.length >= count) break
      writeFileSync(join(dir, 'scans.txt'), (n === 0 ? script : [dc![0]!, ...script]).join('\n'))
      const run = spawnSync('jpegtran', ['-scans', join(dir, 'scans.txt'), join(dir, 'plain.jpg')], { maxBuffer: 1 << 28 })
      if (run.status !== 0) throw new Error(`jpegtran: ${run.stderr.toString()}`)
      const split = scans(run.stdout)
      header ??= split.header
      // The DC's first scan once, from the first file; each file's others.
      parts.push(...(n === 0 ? split.scans : split.scans.slice(1)))
    }
    return Buffer.concat([header!, ...parts.slice(0, count), Buffer.from([0xff, 0xd9])])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The number of SOS markers in a JPEG (its scans). */
export function scanCount (jpeg: Buffer): number {
  return scans(jpeg).scans.length
}
