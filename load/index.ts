// npm run load: starts thumbd (or uses --target), sends load with autocannon, prints a table, writes JSON.
// `--compare` runs every server shape on a fresh server with the same scenario and settings.
import { cpus, totalmem } from 'node:os'
import { USAGE, UsageError, parseLoadArgs, type LoadArgs } from './args.ts'
import type { Cannon } from './cannon.ts'
import { MEDIA_DIR, sampleMedia } from './media.ts'
import { save, table, type Report } from './report.ts'
import { runShape, type ShapeResult } from './run.ts'
import { scenarioRequest } from './scenarios.ts'
import { startServer, type ServerHandle } from './server-process.ts'
import { DEFAULT_SHAPE, compareShapes } from './shapes/index.ts'
import { startStaticServer } from './static-server.ts'

const progress = (line: string) => process.stderr.write(`\r\x1b[K${line}`)
const say = (line: string) => process.stderr.write(`\r\x1b[K${line}\n`)

// Everything a run started, so Ctrl-C (or a failure) stops it all.
const running: { cannon?: Cannon, server?: ServerHandle, closers: Array<() => Promise<void>> } = { closers: [] }
async function cleanUp () {
  running.cannon?.stop()
  await running.server?.stop()
  for (const close of running.closers) await close()
}
process.once('SIGINT', () => { say('interrupted: stopping servers'); cleanUp().finally(() => process.exit(130)) })

async function checkTarget (base: string, apiKey: string) {
  const live = await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined)
  if (live?.status !== 200) throw new UsageError(`target ${base} is not reachable (GET /health/live ${live === undefined ? 'failed' : `answered ${live.status}`})`)
  const auth = await fetch(`${base}/api/hash`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/octet-stream' }, body: 'x' })
  if (auth.status === 401) throw new UsageError(`target ${base} refused the API key`)
}

async function main (args: LoadArgs): Promise<Report> {
  if (args.target !== undefined) await checkTarget(args.target, args.apiKey!)
  say(args.tiny ? 'preparing tiny sample media' : 'preparing sample media (generated with ffmpeg on first run, then cached in load/.media/)')
  const media = await sampleMedia(args.tiny)
  let staticBase: string | undefined
  if (args.scenario === 'video-url') {
    const statics = await startStaticServer(MEDIA_DIR)
    running.closers.push(statics.close)
    staticBase = statics.base
  }
  const request = await scenarioRequest(args.scenario, media, staticBase)
  const urlEnv: Record<string, string> = staticBase === undefined ? {} : { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${staticBase}/` }
  const shapes = args.compare ? compareShapes(args.cores) : [DEFAULT_SHAPE]
  const results: ShapeResult[] = []
  for (const shape of args.target === undefined ? shapes : [{ name: 'target', env: {} }]) {
    say(`${shape.name}: ${args.target === undefined ? 'starting a fresh server' : `against ${args.target}`}`)
    const server = args.target === undefined ? await startServer({ ...shape.env, ...urlEnv }, shape.entry) : undefined
    running.server = server
    try {
      results.push(await runShape({
        shape: shape.name,
        scenario: args.scenario,
        base: server?.base ?? args.target!,
        apiKey: server?.apiKey ?? args.apiKey!,
        pid: server?.pid,
        request,
        connections: args.connections,
        durationSeconds: args.durationSeconds,
        warmupRequests: Math.max(2, args.cores * 2),
        onProgress: progress,
        track: cannon => { running.cannon = cannon }
      }))
    } finally {
      await server?.stop()
      running.server = undefined
    }
  }
  await cleanUp()
  return {
    date: new Date().toISOString(),
    machine: { cores: args.cores, cpu: cpus()[0]?.model.trim() ?? 'unknown', memoryGB: Math.round(totalmem() / 2 ** 30), node: process.versions.node },
    scenario: { name: args.scenario, describe: request.describe },
    settings: { connections: args.connections, durationSeconds: args.durationSeconds, ...(args.target === undefined ? {} : { target: args.target }) },
    results
  }
}

try {
  const args = parseLoadArgs(process.argv.slice(2))
  const report = await main(args)
  const files = await save(report, args.outDir, args.compare)
  if (args.json) process.stdout.write(JSON.stringify(report) + '\n')
  else process.stdout.write(`\n${table(report)}\n\nwritten: ${files.join(', ')}\n`)
} catch (err) {
  await cleanUp()
  if (err instanceof UsageError) {
    say(`thumbd load: ${err.message}`)
    if (/unknown|Unexpected|must be|needs/.test(err.message)) say(USAGE)
    process.exit(2)
  }
  say(`thumbd load: ${(err as Error).message}`)
  process.exit(1)
}
