// The two range headers thumbd reads, parsed strictly: a number that is not a plain decimal, a range that
// ends before it starts or past the size, is no range at all (the caller refuses it).

export interface ByteRange {
  start: number
  /** Inclusive. */
  end: number
}

/** A response's `Content-Range: bytes start-end/size`; undefined for anything else (`*` sizes included). */
export function parseContentRange (header: string | string[] | undefined): (ByteRange & { size: number }) | undefined {
  const match = typeof header === 'string' ? /^bytes (\d{1,15})-(\d{1,15})\/(\d{1,15})$/.exec(header.trim()) : null
  if (match === null) return undefined
  const [start, end, size] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return start <= end && end < size ? { start, end, size } : undefined
}

/**
 * A request's single `Range: bytes=start-[end]` (what ffmpeg's http protocol sends), the end clamped to the
 * last byte; without the header, the whole file; 'unsatisfiable' for what cannot be served from `size`
 * bytes (several ranges, suffix ranges, a start past the end).
 */
export function parseRangeRequest (header: string | undefined, size: number): ByteRange | 'unsatisfiable' {
  if (header === undefined) return size > 0 ? { start: 0, end: size - 1 } : 'unsatisfiable'
  const match = /^bytes=(\d{1,15})-(\d{0,15})$/.exec(header.trim())
  if (match === null) return 'unsatisfiable'
  const start = Number(match[1])
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
  return start < size && start <= end ? { start, end } : 'unsatisfiable'
}
