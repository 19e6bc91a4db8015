// node load/scan-bombs.ts [--side N] [--rounds R] [--scans 10,481,...] [--timeout JOB_TIMEOUT_MS]: what progressive scan bombs cost the server, against the plain
// JPEG of the same size (docs/security.md, issue 46). One server, one pool thread (POOL_THREADS=1, so the job after
// a bomb runs on the bomb's thread). For each file, in alternating rounds: the status, the wall time, and the
// server's CPU (its /proc stat, every thread); after each, the wall time of a 64x64 thumbnail sent at once.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import sharp from 'sharp'
import { plainGrey, scanBomb } from '../test/workers/scan-bombs.ts'
import { startServer } from './server-process.ts'

const { values } = parseArgs({ options: { side: { type: 'string', default: '7000' }, rounds: { type: 'string', default: '2' }, scans: { type: 'string', default: '10,32,33,481,595' }, timeout: { type: 'string', default: '30000' } } })
const side = Number(values.side)
const plain = await plainGrey(side)
const files: Record<string, Buffer> = { plain }
for (const n of values.scans.split(',').map(Number)) files[`${n} scans`] = scanBomb(plain, n)
const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#336699' } }).jpeg().toBuffer()

const server = await startServer({ POOL_THREADS: '1', JOB_TIMEOUT_MS: values.timeout })
const cpuMs = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}
const post = async (body: Buffer) => {
  const start = performance.now()
  const res = await fetch(`${server.base}/api/thumbnail?width=100`, { method: 'POST', body: new Uint8Array(body), headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'image/jpeg' } })
  await res.arrayBuffer()
  return { status: res.status, ms: performance.now() - start }
}
try {
  await post(small)
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, bytes] of Object.entries(files)) {
      const cpu = cpuMs()
      const { status, ms } = await post(bytes)
      const used = cpuMs() - cpu
      const after = await post(small)
      console.log(`${name.padEnd(10)} ${String(bytes.length).padStart(8)} B  ${status}  ${(ms / 1000).toFixed(2)} s  cpu ${(used / 1000).toFixed(2)} s  next job ${after.status} in ${after.ms.toFixed(0)} ms`)
    }
  }
} finally {
  await server.stop()
}
