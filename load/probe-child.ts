// Runs in its own process, see probe.ts: GET /health every `everyMs` until stdin closes, then prints every
// latency (ms) and status (0: no reply) as one JSON line. node:http with one kept-alive connection: a client
// as light as a load balancer's checker (fetch's first call alone takes ~60 ms to load undici).
import { Agent, get } from 'node:http'

const [base, everyMs] = [process.argv[2]!, Number(process.argv[3])]
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const check = (path: string) => new Promise<number>(resolve => {
  const request = get(`${base}${path}`, { agent, timeout: 10_000 }, res => res.resume().on('end', () => resolve(res.statusCode ?? 0)))
  request.on('timeout', () => request.destroy())
  request.on('error', () => resolve(0))
})

const latencies: number[] = []
const statuses: number[] = []
const stopped = new AbortController()
process.stdin.on('end', () => stopped.abort()).resume()
// Not counted: the first request connects and compiles, which says nothing about the server.
for (let i = 0; i < 3; i++) await check('/health/live')
while (!stopped.signal.aborted) {
  const started = performance.now()
  statuses.push(await check('/health'))
  latencies.push(performance.now() - started)
  await new Promise(resolve => setTimeout(resolve, everyMs))
}
process.stdout.write(JSON.stringify({ latencies, statuses }) + '\n')
