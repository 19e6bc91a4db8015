// A JPEG's scans counted before any decoder sees it, so a scan bomb (contract/limits.ts MAX_JPEG_SCANS) is
// refused in microseconds instead of decoded to its limit by libturbojpeg and then again by sharp. The walk is
// libjpeg's: segments by their length; after an SOS, entropy-coded data up to the next marker (0xFF followed by
// neither 0x00, a stuffed byte, nor RST0-7, nor 0xFF, a fill byte); bytes between segments skipped to the next
// 0xFF, as libjpeg skips them (with a warning). So every SOS libjpeg would read is counted, and no 0xFFDA
// inside an APP segment (an EXIF thumbnail's) is. Memory-safe JavaScript: it may run in the pool thread.
import { closeSync, openSync, readSync } from 'node:fs'
import { MAX_JPEG_SCANS } from '../../contract/limits.ts'
import { JobError } from '../../contract/job-error.ts'

const SOS = 0xda
const EOI = 0xd9

/** Counts scans, fed the JPEG in chunks; stops early once past `limit`. */
class ScanCounter {
  scans = 0
  /** Bytes of the current segment still to skip; -1: in entropy-coded data; 0: between segments. */
  private skip = 0
  /** The bytes of a segment's length, when a chunk ends inside them. */
  private pending: number[] = []
  private afterFF = false
  private ended = false
  private started = false

  private readonly limit: number

  constructor (limit: number) { this.limit = limit }

  get done (): boolean { return this.ended || this.scans > this.limit }

  feed (chunk: Uint8Array): void {
    let at = 0
    if (!this.started) {
      this.started = true
      // Not a JPEG (no SOI): nothing to count.
      if (chunk[0] !== 0xff || chunk[1] !== 0xd8) { this.ended = true; return }
      at = 2
    }
    while (at < chunk.length && !this.done) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at)
        this.skip -= n
        at += n
        continue
      }
      if (this.pending.length > 0) {
        this.pending.push(chunk[at++]!)
        if (this.pending.length === 4) this.segment()
        continue
      }
      if (!this.afterFF) {
        // Entropy data or garbage: on to the next 0xFF.
        const ff = chunk.indexOf(0xff, at)
        if (ff < 0) return
        at = ff + 1
        this.afterFF = true
        continue
      }
      const marker = chunk[at++]!
      if (marker === 0xff) continue
      this.afterFF = false
      // A stuffed byte or a restart marker inside entropy-coded data (a lone 0xFF00 between segments is garbage), or
      // a marker without a length (TEM, SOI).
      if (marker === 0x00 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01 || marker === 0xd8) continue
      if (marker === EOI) { this.ended = true; return }
      this.pending = [0xff, marker]
    }
  }

  private segment (): void {
    const [, marker, hi, lo] = this.pending
    this.pending = []
    if (marker === SOS) this.scans++
    // The segment's length counts its own two bytes; entropy data follows an SOS (found by the 0xFF walk).
    this.skip = Math.max(0, ((hi! << 8) | lo!) - 2)
  }
}

/** The scans of a JPEG in memory (counting stops past `limit`). */
export function countScans (bytes: Uint8Array, limit = MAX_JPEG_SCANS): number {
  const counter = new ScanCounter(limit)
  counter.feed(bytes)
  return counter.scans
}

/** The scans of a JPEG in a file, read in 1 MiB chunks (counting stops past `limit`). */
export function countScansInFile (path: string, limit = MAX_JPEG_SCANS): number {
  const counter = new ScanCounter(limit)
  const fd = openSync(path, 'r')
  try {
    const chunk = Buffer.allocUnsafe(1 << 20)
    for (let n; !counter.done && (n = readSync(fd, chunk, 0, chunk.length, null)) > 0;) counter.feed(chunk.subarray(0, n))
  } finally {
    closeSync(fd)
  }
  return counter.scans
}

/** Refuses a JPEG of more than MAX_JPEG_SCANS scans (413: a bound on work, as the pixel limit); other formats pass. */
export function checkScans (input: { bytes: Uint8Array } | { path: string }): void {
  const scans = 'bytes' in input ? countScans(input.bytes) : countScansInFile(input.path)
  if (scans > MAX_JPEG_SCANS) throw new JobError('PAYLOAD_TOO_LARGE', `the JPEG has more than ${MAX_JPEG_SCANS} scans`)
}
