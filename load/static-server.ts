// Serves the sample media on loopback for the URL scenario.
// Files up to CACHED_BYTES are served from memory after their first request: this origin shares the cores with
// the servers it feeds, and streaming each photo from disk in 64 KB reads took CPU from whichever contender's
// work runs at the lower priority (thumbd's pool runs niced), not from both alike. An open range from byte 0
// ("bytes=0-", what thumbd asks a URL source first) is answered 206 with the whole file, as nginx, S3 and CDNs
// answer it: photos by URL then take the path they take from those origins. ORIGIN_RANGES=0 answers 200.
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

const CACHED_BYTES = 64 * 2 ** 20
const honourRanges = process.env.ORIGIN_RANGES !== '0'

/** `tls`: serve HTTPS with this key and certificate (most real origins are HTTPS). */
export async function startStaticServer (dir: string, { tls }: { tls?: { key: Buffer, cert: Buffer } } = {}): Promise<{ base: string, close: () => Promise<void> }> {
  const cache = new Map<string, Buffer>()
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '')
    if (name.includes('/') || name.startsWith('.')) return res.writeHead(404).end()
    const path = join(dir, name)
    const info = await stat(path).catch(() => undefined)
    if (info === undefined || !info.isFile()) return res.writeHead(404).end()
    const whole = { 'content-type': 'application/octet-stream', 'content-length': info.size }
    const ranged = honourRanges && req.headers.range === 'bytes=0-' && info.size > 0
    res.writeHead(ranged ? 206 : 200, ranged ? { ...whole, 'content-range': `bytes 0-${info.size - 1}/${info.size}` } : whole)
    if (info.size > CACHED_BYTES) return createReadStream(path).pipe(res)
    // Keyed by modification time and size too: tests rewrite files between requests.
    const key = `${path}\n${info.mtimeMs}\n${info.size}`
    const cached = cache.get(key) ?? await readFile(path)
    cache.set(key, cached)
    res.end(cached)
  }
  const server = tls === undefined ? createServer(serve) : createTlsServer(tls, serve)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    base: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
