// Temp folders for tests, removed whether the test passes or fails, so a run leaves nothing in the OS temp dir.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A new folder under the OS temp dir. `until`: a test's context (or `{ after }` from node:test for a file's
 * folder), removed when that ends; without it, when the process ends (`node --test` runs a process per file).
 */
export function tempFolder (prefix: string, until?: { after (fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const remove = () => rmSync(dir, { recursive: true, force: true })
  if (until === undefined) process.once('exit', remove)
  else until.after(remove)
  return dir
}
