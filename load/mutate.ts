// Seeded corruption of valid media, for the mutation test (test/hostile/mutations.test.ts) and the long
// run outside CI (npm run fuzz): the same mutations, so a case found by one can be replayed by the other.

/** mulberry32: small, seedable, good enough to pick bytes. */
export function prng (seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function mutate (source: Buffer, random: () => number): Buffer {
  const pick = (n: number) => Math.floor(random() * n)
  const b = Buffer.from(source)
  switch (pick(5)) {
    case 0: // flip a few bytes
      for (let i = 1 + pick(20); i > 0; i--) b[pick(b.length)] ^= 1 + pick(255)
      return b
    case 1: // truncate
      return b.subarray(0, pick(b.length))
    case 2: // zero a run
      return b.fill(0, pick(b.length), pick(b.length))
    case 3: { // insert random bytes
      const at = pick(b.length)
      return Buffer.concat([b.subarray(0, at), Buffer.from(Array.from({ length: 1 + pick(64) }, () => pick(256))), b.subarray(at)])
    }
    default: { // repeat a slice
      const at = pick(b.length)
      return Buffer.concat([b.subarray(0, at), b.subarray(pick(b.length), pick(b.length)), b.subarray(at)])
    }
  }
}
