// 64-bit DCT perceptual hash (the classic pHash): DCT-II of a 32x32 greyscale image, keep the 8x8 lowest
// frequencies, one bit per coefficient above their median. Near-identical pictures differ in a few bits.
const N = 32
const K = 8

// COS[k][n] = cos(pi * (2n + 1) * k / 2N): only the K lowest frequencies are ever needed.
const COS = Array.from({ length: K }, (_, k) => Float64Array.from({ length: N }, (_, n) => Math.cos((Math.PI * (2 * n + 1) * k) / (2 * N))))

/** grey: N*N bytes, row-major. */
export function phash (grey: Uint8Array): string {
  if (grey.length !== N * N) throw new RangeError(`phash needs ${N}x${N} grey pixels`)
  // Separable DCT: rows first (K coefficients per row), then the columns of those.
  const rows = lowFrequencies(N, (y, x) => grey[y * N + x]!)
  const columns = lowFrequencies(K, (u, y) => rows[y * K + u]!)
  // Row-major by vertical frequency, as the hash's bits have always been ordered.
  const low = Float64Array.from({ length: K * K }, (_, i) => columns[(i % K) * K + Math.floor(i / K)]!)
  const sorted = [...low].sort((a, b) => a - b)
  const median = (sorted[K * K / 2 - 1]! + sorted[K * K / 2]!) / 2
  let bits = 0n
  for (const value of low) bits = (bits << 1n) | (value > median ? 1n : 0n)
  return bits.toString(16).padStart(16, '0')
}

/** The K lowest DCT-II coefficients of each of `lines` lines of N samples: out[line * K + k]. */
function lowFrequencies (lines: number, sample: (line: number, n: number) => number): Float64Array {
  const out = new Float64Array(lines * K)
  for (let line = 0; line < lines; line++) {
    for (let k = 0; k < K; k++) {
      let sum = 0
      for (let n = 0; n < N; n++) sum += sample(line, n) * COS[k]![n]!
      out[line * K + k] = sum
    }
  }
  return out
}

export function hammingDistance (a: string, b: string): number {
  let diff = BigInt(`0x${a}`) ^ BigInt(`0x${b}`)
  let count = 0
  for (; diff > 0n; diff >>= 1n) count += Number(diff & 1n)
  return count
}
