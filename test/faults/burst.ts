// A load client in its own process, so the load it makes does not delay the test's own event loop.
// Usage: node burst.ts <base> <count> <file> <key>; prints one JSON line of { status, code, retryAfter }.
import { readFile } from 'node:fs/promises'

const [base, count, file, key] = process.argv.slice(2) as [string, string, string, string]
const body = new Uint8Array(await readFile(file))
const replies = await Promise.all(Array.from({ length: Number(count) }, async (_, i) => {
  const res = await fetch(`${base}/api/thumbnail?at=${(i % 10) / 10}`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, 'content-type': 'video/mp4' } })
  const text = await res.text()
  return { status: res.status, code: res.status === 200 ? undefined : JSON.parse(text).code, retryAfter: res.headers.get('retry-after') }
}))
process.stdout.write(JSON.stringify(replies) + '\n')
