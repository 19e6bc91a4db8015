// A loopback origin for URL and GET tests: serves each file by its name (`/NAME`), 404 otherwise; closed
// when the test ends. Answers the origin's base URL (http://127.0.0.1:PORT).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export async function fileOrigin (t: TestContext, files: Record<string, Buffer>): Promise<string> {
  const server = createServer((req, res) => {
    const file = files[req.url!.slice(1)]
    if (file === undefined) return res.writeHead(404).end()
    res.writeHead(200, { 'content-length': file.length }).end(file)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise(resolve => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
