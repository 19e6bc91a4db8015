// A bounded in-memory memo of recent GET-URL replies, by the same key as shared work (the path as signed and
// the negotiated format), so that identical requests arriving just after the first one finished (a CDN's
// miss storm spread over a few hundred ms) are answered without another fetch or job. Least recently used
// replies go first once the bytes bound is reached; a reply older than the TTL is never served (the source
// may have changed). Hand-written: a Map in insertion order is the whole LRU.

export interface MemoisedReply {
  etag: string
  /** content-type and, if any, content-disposition. */
  headers: Record<string, string>
  body: Buffer
}

interface Entry { reply: MemoisedReply, bytes: number, until: number }

/** Per-entry bookkeeping counted on top of the body: the key, the headers and the Map's slot, roughly. */
const ENTRY_OVERHEAD = 512

export function createResultMemo ({ maxBytes, ttlMs, now = Date.now }: { maxBytes: number, ttlMs: number, now?: () => number }) {
  const entries = new Map<string, Entry>()
  let total = 0
  const drop = (key: string, entry: Entry) => {
    entries.delete(key)
    total -= entry.bytes
  }
  const on = maxBytes > 0 && ttlMs > 0

  return {
    get (key: string): MemoisedReply | undefined {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      drop(key, entry)
      if (entry.until <= now()) return undefined
      entries.set(key, entry) // most recently used last
      total += entry.bytes
      return entry.reply
    },
    set (key: string, reply: MemoisedReply): void {
      const bytes = reply.body.byteLength + key.length + ENTRY_OVERHEAD
      // A reply over an eighth of the bound would push out many others for one URL: not kept.
      if (!on || bytes > maxBytes / 8) return
      const old = entries.get(key)
      if (old !== undefined) drop(key, old)
      for (const [oldest, entry] of entries) {
        if (total + bytes <= maxBytes) break
        drop(oldest, entry)
      }
      entries.set(key, { reply, bytes, until: now() + ttlMs })
      total += bytes
    },
    /** Bytes held now (bodies and bookkeeping). */
    get bytes () { return total }
  }
}
