// Flags of `npm run load`. Anything unknown is one clear line and exit 2, before any load is sent.
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.ts'

export interface LoadArgs {
  scenario: ScenarioName
  connections: number
  durationSeconds: number
  compare: boolean
  target?: string
  apiKey?: string
  json: boolean
  /** Small media, for the harness smoke test. */
  tiny: boolean
  outDir: string
  cores: number
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run load -- [--scenario ${SCENARIO_NAMES.join('|')}] [--connections N] [--duration S]
                     [--compare] [--target URL --api-key KEY] [--json] [--tiny] [--out DIR]`

function positiveInt (name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a whole number >= 1 (got "${value}")`)
  return n
}

export function parseLoadArgs (argv: string[]): LoadArgs {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        scenario: { type: 'string' },
        connections: { type: 'string' },
        duration: { type: 'string' },
        compare: { type: 'boolean', default: false },
        target: { type: 'string' },
        'api-key': { type: 'string' },
        json: { type: 'boolean', default: false },
        tiny: { type: 'boolean', default: false },
        out: { type: 'string' }
      }
    }))
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0])
  }
  const scenario = (values.scenario ?? 'video') as ScenarioName
  if (!SCENARIO_NAMES.includes(scenario)) throw new UsageError(`unknown scenario "${values.scenario}"; one of ${SCENARIO_NAMES.join(', ')}`)
  if (values.target !== undefined) {
    if (URL.parse(values.target) === null) throw new UsageError(`--target must be a URL (got "${values.target}")`)
    if (values['api-key'] === undefined) throw new UsageError('--target needs --api-key')
    if (values.compare) throw new UsageError('--compare starts its own servers; it cannot run against --target')
    if (scenario === 'video-url') throw new UsageError('video-url needs the static server this tool starts on loopback, which a remote target cannot reach')
  }
  return {
    scenario,
    connections: positiveInt('connections', values.connections, 16),
    durationSeconds: positiveInt('duration', values.duration, 20),
    compare: values.compare,
    target: values.target?.replace(/\/$/, ''),
    apiKey: values['api-key'],
    json: values.json,
    tiny: values.tiny,
    outDir: values.out ?? fileURLToPath(new URL('results/', import.meta.url)),
    cores: availableParallelism()
  }
}
