// Webhooks, signed as Stripe's and Mux's are: `Thumbd-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`,
// one v1 per key of WEBHOOK_SIGNING_KEYS while keys rotate, so a receiver that knows either key verifies it, and
// one that checks t refuses a replay. Each delivery is a job of the engine's webhook queue: retried with backoff
// (engine.ts) until the receiver answers 2xx, or for a bounded time. The URL passes the address policy of URL
// sources, at submission and again for every address connected to (the same DNS guard as fetch-source.ts).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { Agent, request } from 'undici'
import { guardedLookup } from '../sources/fetch-source.ts'
import { checkSourceUrl, type SourcePolicy } from '../sources/url-policy.ts'

export const SIGNATURE_HEADER = 'thumbd-signature'
const TIMEOUT_MS = 10_000

export interface WebhookTask {
  url: string
  /** The JSON body, exactly as signed. */
  body: string
}

export function sign (body: string, keys: readonly string[], now = Date.now()): string {
  const t = Math.floor(now / 1000)
  return [`t=${t}`, ...keys.map(key => `v1=${createHmac('sha256', key).update(`${t}.${body}`).digest('hex')}`)].join(',')
}

/** What a receiver does (docs/api.md shows it): true when one v1 matches under `key` and t is recent enough. */
export function verify (header: string, body: string, key: string, toleranceSeconds = 300, now = Date.now()): boolean {
  const parts = header.split(',').map(p => p.split('=', 2) as [string, string])
  const t = Number(parts.find(([k]) => k === 't')?.[1])
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false
  const expected = Buffer.from(createHmac('sha256', key).update(`${t}.${body}`).digest('hex'))
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected))
}

export function createWebhookSender (policy: SourcePolicy, keys: readonly string[]) {
  const agent = new Agent({
    connect: { lookup: guardedLookup(host => lookup(host, { all: true }), policy), timeout: TIMEOUT_MS },
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS
  })
  return {
    /** At submission: SOURCE_FORBIDDEN (400) for a URL the policy refuses. */
    check: (url: string) => checkSourceUrl(url, policy),
    /** One delivery; throws (so the engine retries it) unless the receiver answers 2xx. Redirects are not followed. */
    async deliver ({ url, body }: WebhookTask) {
      const target = checkSourceUrl(url, policy)
      const response = await request(target, {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { 'content-type': 'application/json', 'user-agent': 'thumbd-webhook', [SIGNATURE_HEADER]: sign(body, keys) },
        body
      })
      await response.body.dump()
      if (response.statusCode < 200 || response.statusCode > 299) throw new Error(`the webhook receiver answered ${response.statusCode}`)
    },
    close: () => agent.close()
  }
}
