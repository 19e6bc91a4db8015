// A decoder in the sandbox may read one file, its input: a source's spool file as it is, or one written for the
// bytes of a source held in memory (O_EXCL, 0600, in the process's own 0700 folder; removed whatever happens).
// Used by every sandboxed image decode: JPEG (jpeg-sandboxed.ts), stills (still-sandboxed.ts), HEIC (image.ts).
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { JobError } from '../../contract/job-error.ts'
import type { JobSource } from '../../contract/types.ts'

/** `use` of the source's file: its spool file, or one written for it in `tempDir`. */
export async function withInputFile<T> (ref: JobSource['ref'], tempDir: string, use: (path: string) => Promise<T>): Promise<T> {
  if (ref.location === 'remote') throw new JobError('INTERNAL', 'internal error', 'images are never read remotely')
  if (ref.location === 'file') return await use(ref.path)
  const path = join(tempDir, `decode-${randomBytes(9).toString('base64url')}`)
  writeFileSync(path, ref.bytes, { flag: 'wx', mode: 0o600 })
  try {
    return await use(path)
  } finally {
    rmSync(path, { force: true })
  }
}
