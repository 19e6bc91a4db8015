// Opening a file below LOCAL_FILESYSTEM_ROOT and nothing else, whatever the tree holds and whatever changes in
// it meanwhile: the path is resolved (realpath) and must lie under the root, must be a regular file before it is
// opened (a FIFO would block, a device act on being opened), is opened without following a last symlink and
// without blocking, and the file actually opened is checked again by its descriptor (/proc/self/fd: where it
// really is, on which file system, of which type), so a symlink swapped in between the checks and the open is
// caught after all. Refusals name the setting and never the path, which may be outside the root.
import { constants, type Stats } from 'node:fs'
import { lstat, open, readlink, realpath, statfs, type FileHandle } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { errors } from '../../errors.ts'

const OUTSIDE = 'the path leaves LOCAL_FILESYSTEM_ROOT'

/**
 * File systems whose files say they are regular yet are the kernel's (sizes of 0, reads with side effects):
 * refused even with LOCAL_FILESYSTEM_ROOT=/. proc, sysfs, debugfs, securityfs, cgroup, cgroup2, tracefs,
 * configfs, bpf, efivarfs, pstore.
 */
const KERNEL_FILE_SYSTEMS = new Set([0x9fa0, 0x62656572, 0x64626720, 0x73636673, 0x27e0eb, 0x63677270, 0x74726163, 0x62656570, 0xcafe4a11, 0xde5e81e4, 0x6165676c])

/** Whether `path` (resolved) is the root or below it. */
export function inside (root: string, path: string): boolean {
  const rest = relative(root, path)
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest))
}

/** The path a key names under the root, lexically; SOURCE_FORBIDDEN if it climbs out (parseStoreUrl already refused dot segments). */
export function pathOf (root: string, key: string): string {
  const path = join(root, key)
  if (!inside(root, path) || path === root) throw new errors.SourceForbidden(OUTSIDE)
  return path
}

/** A filesystem error as the catalogue's: missing is 404, a loop or a non-directory in the path is forbidden, the rest 502. */
export function fsError (err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'ENOTDIR') return new errors.SourceNotFound('no such object in local:// (below LOCAL_FILESYSTEM_ROOT)')
  if (code === 'ELOOP') return new errors.SourceForbidden('the path is a symlink loop or a symlink that may not be followed (LOCAL_FILESYSTEM_ROOT)')
  if (err instanceof Error && 'statusCode' in err) return err
  if (code === 'EACCES' || code === 'EPERM') return new errors.SourceFetchFailed('local:// refused access (the file\'s permissions do not let thumbd read it)')
  // The cause (with the path) goes to the log only through the error handler's own redaction: none is attached.
  return new errors.SourceFetchFailed(`local:// could not read the file (${code ?? 'error'})`)
}

/**
 * Where the deepest existing part of `path` really is: the path itself resolved, else (a dangling symlink)
 * where its target's deepest existing part is, else its parent's. Bounded as the kernel bounds symlink hops.
 */
async function deepestExisting (path: string, hops = 0): Promise<string> {
  try {
    return await realpath(path)
  } catch {}
  if (hops < 40) {
    try {
      if ((await lstat(path)).isSymbolicLink()) {
        const from = await realpath(dirname(path)).catch(() => dirname(path))
        return await deepestExisting(resolve(from, await readlink(path)), hops + 1)
      }
    } catch {}
  }
  const parent = dirname(path)
  return parent === path ? path : deepestExisting(parent, hops)
}

/** The opened regular file under `root` (a realpath) and its stats; the caller closes it. */
export async function openInside (root: string, key: string): Promise<{ handle: FileHandle, stats: Stats }> {
  let handle: FileHandle | undefined
  try {
    const path = pathOf(root, key)
    const real = await realpath(path).catch(async (err: NodeJS.ErrnoException) => {
      // Missing: but where? A symlink out to a missing file must not answer 404 where one to an existing file
      // answers 400, or the pair tells whether any path outside the root exists. Refused alike when the deepest
      // part of the path that does exist (through symlinks) lies outside the root.
      if ((err.code === 'ENOENT' || err.code === 'ENOTDIR') && !inside(root, await deepestExisting(path))) throw new errors.SourceForbidden(OUTSIDE)
      throw err
    })
    if (!inside(root, real)) throw new errors.SourceForbidden(OUTSIDE)
    if (!(await lstat(real)).isFile()) throw new errors.SourceForbidden('not a regular file (LOCAL_FILESYSTEM_ROOT serves files only: no directories, devices, FIFOs or sockets)')
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY)
    const stats = await handle.stat()
    const opened = await readlink(`/proc/self/fd/${handle.fd}`)
    if (!stats.isFile()) throw new errors.SourceForbidden('not a regular file (LOCAL_FILESYSTEM_ROOT serves files only)')
    if (!inside(root, opened)) throw new errors.SourceForbidden(OUTSIDE)
    if (KERNEL_FILE_SYSTEMS.has((await statfs(`/proc/self/fd/${handle.fd}`)).type)) throw new errors.SourceForbidden('a kernel file system (/proc, /sys ...) is never served (LOCAL_FILESYSTEM_ROOT)')
    return { handle, stats }
  } catch (err) {
    await handle?.close()
    throw fsError(err)
  }
}
