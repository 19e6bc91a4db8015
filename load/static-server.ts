// Serves the sample media on loopback for the URL scenario.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

export async function startStaticServer (dir: string): Promise<{ base: string, close: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, '')
    if (name.includes('/') || name.startsWith('.')) return res.writeHead(404).end()
    const path = join(dir, name)
    const info = await stat(path).catch(() => undefined)
    if (info === undefined || !info.isFile()) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': info.size })
    createReadStream(path).pipe(res)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
