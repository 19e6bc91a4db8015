// The one key of a result in the result store: what the reply is made of, and nothing that only proves the
// right to ask for it. As imgproxy Pro's cache: the source, the canonical options and the output format
// (the one Accept chose, for auto), never the signature, so that rotating URL_SIGNING_KEYS keeps every entry
// and two spellings of the same ask (w:300 and rs:fit:300:0, a preset or its options) share one. The
// cachebuster (cb) is one of the options: changing it changes the key. Pure: tested on its own.
import { hash } from 'node:crypto'

/** Bumped when a change of thumbd makes different bytes for the same ask: old entries are then never read. */
export const KEY_VERSION = 1

export interface ResultKeyParts {
  /** Which reply: an image of the source, a storyboard's sprite, a preview animation. */
  kind: 'image' | 'storyboard' | 'preview'
  /** The source URL as parsed (WHATWG-normalised, so spellings a proxy rewrites agree). */
  source: string
  /** signed-urls/parse.ts normalisedOptions: sorted, defaults filled, cachebuster included, no signature. */
  options: Record<string, unknown>
  /** The output format decided before the fetch ('' for a reply in the source's own format). */
  format: string
  /** FORMAT_QUALITY: a default quality changes the bytes of every URL that names none. */
  defaultQuality: Readonly<Record<string, number>>
}

/** 64 hex characters (SHA-256 of the canonical parts). */
export function resultKey ({ kind, source, options, format, defaultQuality }: ResultKeyParts): string {
  const quality = Object.fromEntries(Object.keys(defaultQuality).sort().map(name => [name, defaultQuality[name]]))
  return hash('sha256', JSON.stringify([KEY_VERSION, kind, source, options, format, quality]), 'hex')
}

/**
 * Where an entry lives under the store's root or prefix: a folder per hash prefix, as thumbor's file result
 * storage does, so that no directory holds more than a few hundred entries of a big store.
 */
export function entryPath (key: string): string {
  return `${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`
}
