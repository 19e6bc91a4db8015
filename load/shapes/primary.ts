// What the comparison shapes' primaries share: a log line in the server's format, and the generated key.
import type { Config } from '../../src/config.ts'

export const log = (role: string, msg: string, extra: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, role, ...extra, msg }))

/** Cluster workers and server threads copy the environment: with no API_KEYS, they must all accept the primary's generated key. */
export function shareGeneratedKey (config: Config, role: string): void {
  if (!config.apiKeyGenerated) return
  process.env.API_KEYS = config.apiKeys[0]
  log(role, `API_KEYS is not set: this run accepts the generated key ${config.apiKeys[0]}`)
}
