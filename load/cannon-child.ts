// Runs in its own (niced) process, see cannon.ts: autocannon's API with the body as bytes (its CLI would
// read a body file as UTF-8 and mangle binary media). Prints the result as one JSON line.
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import type { UniqueUrls } from './cannon.ts'
import { signedThumbnailPath } from './imgproxy-url.ts'

const options = JSON.parse(process.argv[2]!) as { url: string, method: 'GET' | 'POST', headers: Record<string, string>, bodyFile: string, connections: number, durationSeconds: number, unique?: UniqueUrls }
const { unique } = options
let nonce = 0
const instance = autocannon({
  url: options.url,
  method: options.method,
  headers: options.headers,
  body: options.method === 'GET' ? undefined : readFileSync(options.bodyFile),
  connections: options.connections,
  duration: options.durationSeconds,
  timeout: 120,
  // Signed here, per request: the same path each time would measure a server's memo, not its work.
  requests: unique === undefined ? undefined : [{ setupRequest: request => ({ ...request, path: `${unique.prefix}${signedThumbnailPath(unique.signed, nonce++)}` }) }]
})
process.once('SIGINT', () => instance.stop())
const result = await instance
process.stdout.write(JSON.stringify(result) + '\n')
