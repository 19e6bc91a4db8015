// Runs in its own (niced) process, see cannon.ts: autocannon's API with the body as bytes (its CLI would
// read a body file as UTF-8 and mangle binary media). Prints the result as one JSON line.
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'

const options = JSON.parse(process.argv[2]!) as { url: string, method: 'GET' | 'POST', headers: Record<string, string>, bodyFile: string, connections: number, durationSeconds: number }
const instance = autocannon({
  url: options.url,
  method: options.method,
  headers: options.headers,
  body: options.method === 'GET' ? undefined : readFileSync(options.bodyFile),
  connections: options.connections,
  duration: options.durationSeconds,
  timeout: 120
})
process.once('SIGINT', () => instance.stop())
const result = await instance
process.stdout.write(JSON.stringify(result) + '\n')
