// The text forms of the variables that hold several values (lists, format=quality, name=options, keys paired
// with salts), read into what Config holds; a malformed one is a ConfigError naming the variable. src/config.ts
// validates everything else against its schema.
import { checkPresets } from './signed-urls/parse.ts'
import { parseSigningKeys, type SigningKey } from './signed-urls/signature.ts'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** A comma-separated list, blanks dropped. */
export const list = (value: string) => value.split(',').map(s => s.trim()).filter(Boolean)

/** FORMAT_QUALITY: "jpeg=80,webp=79,avif=63"; a format left out takes 80. */
export function formatQuality (value: string): Record<'jpeg' | 'webp' | 'avif', number> {
  const qualities = { jpeg: 80, webp: 80, avif: 80 }
  for (const entry of list(value)) {
    const match = /^(jpeg|jpg|webp|avif)=(\d{1,3})$/.exec(entry)
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 100) throw new ConfigError(`FORMAT_QUALITY entry "${entry}" is not format=quality (jpeg, webp or avif; 1-100)`)
    qualities[match[1] === 'jpg' ? 'jpeg' : match[1] as 'jpeg' | 'webp' | 'avif'] = Number(match[2])
  }
  return qualities
}

/** URL_PRESETS: "name=options;name2=options". */
export function presets (value: string): Record<string, string> {
  const entries = value.split(';').map(s => s.trim()).filter(Boolean).map(entry => {
    const match = /^([\w-]+)=(.+)$/.exec(entry)
    if (match === null) throw new ConfigError(`URL_PRESETS entry "${entry}" is not name=options`)
    return [match[1]!, match[2]!.trim()] as const
  })
  const named = Object.fromEntries(entries)
  try {
    checkPresets(named)
  } catch (err) {
    throw new ConfigError(`URL_PRESETS: ${(err as Error).message}`)
  }
  return named
}

/** URL_SIGNING_KEYS and URL_SIGNING_SALTS, paired by position (signed-urls/signature.ts says what is wrong). */
export function signingKeys (keys: string[], salts: string[]): SigningKey[] {
  try {
    return parseSigningKeys(keys, salts)
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
}
