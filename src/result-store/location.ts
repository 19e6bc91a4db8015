// RESULT_STORAGE's text read into where results go: a directory (file:///dir) or a bucket prefix
// (s3://bucket/prefix, gs://bucket/prefix, abs://container/prefix). Pure; src/config.ts reports a bad value
// as a ConfigError naming the variable.
import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'

export type ResultStorage =
  | { kind: 'directory', path: string }
  | BucketStorage

export interface BucketStorage {
  kind: 'bucket'
  scheme: 's3' | 'gs' | 'abs'
  bucket: string
  /** '' or ending in '/'. */
  prefix: string
}

const USAGE = 'file:///absolute/dir, s3://bucket[/prefix], gs://bucket[/prefix] or abs://container[/prefix]'

/** undefined for '' (no result store); throws an Error saying what is wrong. */
export function parseResultStorage (value: string): ResultStorage | undefined {
  if (value === '') return undefined
  const scheme = /^([a-z0-9]+):\/\//.exec(value)?.[1]
  if (scheme === 'file') {
    let path: string
    try {
      path = fileURLToPath(value)
    } catch (err) {
      throw new Error(`RESULT_STORAGE "${value}" is not a file URL (${(err as Error).message}): use ${USAGE}`)
    }
    if (!isAbsolute(path) || path === '/') throw new Error(`RESULT_STORAGE "${value}" must name a directory of its own: use ${USAGE}`)
    return { kind: 'directory', path: path.replace(/\/+$/, '') }
  }
  if (scheme === 's3' || scheme === 'gs' || scheme === 'abs') {
    const rest = value.slice(scheme.length + 3)
    const slash = rest.indexOf('/')
    const bucket = slash < 0 ? rest : rest.slice(0, slash)
    const prefix = (slash < 0 ? '' : rest.slice(slash + 1)).replace(/^\/+|\/+$/g, '')
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`RESULT_STORAGE "${value}": "${bucket}" is not a bucket or container name (3-63 lowercase letters, digits, '.' and '-')`)
    return { kind: 'bucket', scheme, bucket, prefix: prefix === '' ? '' : `${prefix}/` }
  }
  throw new Error(`RESULT_STORAGE "${value}" is not a result store: use ${USAGE}`)
}
