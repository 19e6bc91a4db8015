// Ids the engine is given rather than makes: a job sent twice under one id is one job (pg-boss inserts nothing the
// second time), which is how an Idempotency-Key and a webhook sent again after a crash stay one.
import { hash, randomUUID } from 'node:crypto'

/** A UUID that is a function of its parts. */
export function derivedId (...parts: string[]): string {
  const hex = hash('sha256', parts.join('\n'), 'hex')
  // Version 8 (custom) and the RFC 9562 variant, so it reads as the UUID it is.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

export const newJobId = () => randomUUID()

/** Who a key is, as a job records it: a hash, never the key. */
export const ownerOf = (apiKey: string) => hash('sha256', `thumbd-job-owner\n${apiKey}`, 'hex').slice(0, 32)

export const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
