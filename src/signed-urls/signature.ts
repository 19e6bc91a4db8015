// imgproxy's URL signature, byte for byte (security/signature.go in imgproxy 4.0.12): HMAC-SHA256 keyed by
// the key, over the salt followed by the path after the signature segment ("/rs:fit:300:300/plain/..."),
// sent as base64url without padding. Keys and salts are hex. Several pairs live at once so that keys can be
// rotated: a URL is good if any pair signed it. Pure (node:crypto only) so the route, the sign-url script
// and a user's own code share it.
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'

export interface SigningKey {
  readonly key: Uint8Array
  readonly salt: Uint8Array
  /**
   * The key as a KeyObject, made once (parseSigningKeys): createHmac() makes one from raw bytes on every call,
   * 15 us against 2.4 here, on every signed request.
   */
  readonly keyObject?: KeyObject
}

/** An HMAC-SHA256 is 32 bytes: 43 base64url characters without padding. */
const SIGNATURE_BYTES = 32
const SIGNATURE_TEXT = /^[A-Za-z0-9_-]{43}$/
const HEX = /^(?:[0-9a-f]{2})+$/i

/**
 * Keys and salts from their hex text, paired by position. Throws an Error naming the variable and the entry
 * when the counts differ, an entry is empty or is not hex: a half-configured rotation must stop the start,
 * not quietly reject (or accept) URLs.
 */
export function parseSigningKeys (keysHex: readonly string[], saltsHex: readonly string[]): SigningKey[] {
  if (keysHex.length !== saltsHex.length) {
    throw new Error(`URL_SIGNING_SALTS must have one salt per URL_SIGNING_KEYS entry (${keysHex.length} keys, ${saltsHex.length} salts)`)
  }
  return keysHex.map((key, i) => {
    const bytes = fromHex(`URL_SIGNING_KEYS entry ${i + 1}`, key)
    return Object.freeze({ key: bytes, salt: fromHex(`URL_SIGNING_SALTS entry ${i + 1}`, saltsHex[i]!), keyObject: createSecretKey(bytes) })
  })
}

/** The bytes of a hex key or salt; an error names it as `label` says (the variable's entry, or a flag). */
export function fromHex (label: string, text: string): Buffer {
  const value = text.trim()
  if (value === '') throw new Error(`${label} is empty (make one with: openssl rand -hex 32)`)
  if (!HEX.test(value)) throw new Error(`${label} is not hex (an even number of 0-9a-f digits; make one with: openssl rand -hex 32)`)
  return Buffer.from(value, 'hex')
}

function mac (path: string, key: Uint8Array | KeyObject, salt: Uint8Array): Buffer {
  const hmac = createHmac('sha256', key).update(salt)
  // As imgproxy: the signed path starts with '/'; a caller that cut it off still gets the same MAC.
  if (!path.startsWith('/')) hmac.update('/')
  return hmac.update(path).digest()
}

/** The signature of `path` (everything after the signature segment, from its '/'). */
export function signPath (path: string, key: Uint8Array, salt: Uint8Array): string {
  return mac(path, key, salt).toString('base64url')
}

/** The path to request: "/i/<signature>/<options>/<source>", for the sign-url script and the docs. */
export function signedUrlPath (path: string, key: Uint8Array, salt: Uint8Array): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`
  return `/i/${signPath(withSlash, key, salt)}${withSlash}`
}

/**
 * What a refused signature says. With no pair configured no signature can match: say that GET URLs are off and
 * what turns them on, rather than "does not match", which sends the user to check a signature that is fine.
 */
export function mismatchReason (keys: readonly SigningKey[]): string {
  if (keys.length > 0) return 'it does not match this path'
  return 'GET URLs are off on this server: set URL_SIGNING_KEYS and URL_SIGNING_SALTS (hex, one salt per key; e.g. in .env) and restart it'
}

/**
 * Whether any pair signed `path`. Every pair is computed and compared, in constant time on equal-length
 * buffers and without an early exit, so the reply time says nothing about which key matched or how much of
 * the signature was right. A signature that is not 43 base64url characters, or not their canonical form, is
 * compared as zeros (and then refused), for the same reason. Truncated signatures (imgproxy's IMGPROXY_SIGNATURE_SIZE) are not taken.
 */
export function verifySignature (signature: string, path: string, keys: readonly SigningKey[]): boolean {
  return signerOf(signature, path, keys) !== undefined
}

/** The pair that signed `path` (checked as verifySignature says), if any: what may sign a URL the reply hands out. */
export function signerOf (signature: string, path: string, keys: readonly SigningKey[]): SigningKey | undefined {
  // Canonical only: Go's RawURLEncoding (so imgproxy) and Buffer ignore the 2 unused low bits of the last
  // character, which would give each signature four spellings, each fetched and cached apart.
  const wellFormed = SIGNATURE_TEXT.test(signature) && Buffer.from(signature, 'base64url').toString('base64url') === signature
  const given = wellFormed ? Buffer.from(signature, 'base64url') : Buffer.alloc(SIGNATURE_BYTES)
  let signer: SigningKey | undefined
  for (const pair of keys) {
    if (timingSafeEqual(mac(path, pair.keyObject ?? pair.key, pair.salt), given)) signer ??= pair
  }
  return wellFormed ? signer : undefined
}
