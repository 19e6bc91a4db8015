// One stored result as one object: a small header (the reply's validator and headers, and when the entry
// expires) before the reply's bytes. Self-contained, so that a hit is one read of one object from any store,
// whatever that store does with metadata, and an entry is never half a reply (stores write whole or nothing).
// Layout: "THR1", the header's length (uint32 BE), the header as JSON, the body.

export interface StoredReply {
  /** The ETag the miss sent (from the source's digest and the options): a hit sends the same. */
  etag: string
  /** The headers that describe the bytes: content-type and, if any, content-disposition. */
  headers: Record<string, string>
  body: Buffer
}

export interface StoredEntry extends StoredReply {
  /** Epoch ms after which the entry is not served (RESULT_STORAGE_SECONDS after it was written). */
  expires: number
}

const MAGIC = Buffer.from('THR1')
const PREFIX = MAGIC.length + 4
/** Only these headers are kept and given back: a store's bytes never set any other header on a reply. */
const KEPT = new Set(['content-type', 'content-disposition'])

export function encodeEntry ({ etag, headers, body, expires }: StoredEntry): Buffer {
  const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => KEPT.has(name)))
  const header = Buffer.from(JSON.stringify({ etag, headers: kept, expires }))
  const prefix = Buffer.allocUnsafe(PREFIX)
  MAGIC.copy(prefix)
  prefix.writeUInt32BE(header.length, MAGIC.length)
  return Buffer.concat([prefix, header, body])
}

/** The entry in `bytes`, or undefined when they are not one (truncated, another program's object, a newer layout). */
export function decodeEntry (bytes: Buffer): StoredEntry | undefined {
  if (bytes.length < PREFIX || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined
  const length = bytes.readUInt32BE(MAGIC.length)
  if (PREFIX + length > bytes.length) return undefined
  let header: unknown
  try {
    header = JSON.parse(bytes.subarray(PREFIX, PREFIX + length).toString())
  } catch {
    return undefined
  }
  const { etag, headers, expires } = header as Partial<StoredEntry>
  if (typeof etag !== 'string' || typeof expires !== 'number' || typeof headers !== 'object' || headers === null) return undefined
  const kept = Object.fromEntries(Object.entries(headers).filter(([name, value]) => KEPT.has(name) && typeof value === 'string'))
  return { etag, headers: kept, expires, body: bytes.subarray(PREFIX + length) }
}
