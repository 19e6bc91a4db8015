// imgproxy's signed URL path, for the peer bench (load/peer.ts) and its load child (load/cannon-child.ts),
// which signs a fresh one per request: the same URL over and over would be answered by thumbd's result memo
// and shared work (src/signed-urls), which imgproxy does not have, and measure those instead of a thumbnail.
import { signPath } from '../src/signed-urls/signature.ts'

/** imgproxy's signature (thumbd's own signer, the same HMAC-SHA256 over salt + path), key and salt in hex. */
export function signImgproxyPath (path: string, keyHex: string, saltHex: string): string {
  return signPath(path, Buffer.from(keyHex, 'hex'), Buffer.from(saltHex, 'hex'))
}

export interface SignedThumbnail { source: string, format: string, width: number, key: string, salt: string }

/**
 * /{signature}/rs:fit:{width}:0/q:80/plain/{source}@{ext}; with `nonce`, the source gets ?n={nonce} (the
 * static origin ignores the query), percent-encoded as imgproxy's plain sources with a query must be.
 */
export function signedThumbnailPath ({ source, format, width, key, salt }: SignedThumbnail, nonce?: number): string {
  const plain = nonce === undefined ? source : encodeURIComponent(`${source}?n=${nonce}`)
  const path = `/rs:fit:${width}:0/q:80/plain/${plain}@${format === 'jpeg' ? 'jpg' : format}`
  return `/${signImgproxyPath(path, key, salt)}${path}`
}
