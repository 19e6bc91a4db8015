// A directory as a store: `local:///path` sources under LOCAL_FILESYSTEM_ROOT, and a place the result store and
// job outputs can write to. Reads answer like an HTTP origin (206 for a range); the ETag is made of the file's
// inode, size and mtime, which change when the file is replaced or rewritten. Writes are whole or nothing: a
// temp file in the same directory, renamed into place (readers see the old file or the new one, never a part).
// Content type and metadata sit in a hidden sidecar file, `.<name>.meta.json`, written first.
import { randomBytes } from 'node:crypto'
import { constants, createReadStream, realpathSync } from 'node:fs'
import { mkdir, open, realpath, rename, unlink, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { errors } from '../../errors.ts'
import { askedRange, storeAnswer } from '../answer.ts'
import type { LocalSettings } from '../settings.ts'
import type { ObjectLocation, ObjectStat, ObjectStore, WriteOptions } from '../store.ts'
import { fsError, inside, openInside, pathOf } from './inside-root.ts'

interface Sidecar {
  contentType?: string
  cacheControl?: string
  metadata?: Record<string, string>
}

const sidecarOf = (path: string) => join(dirname(path), `.${basename(path)}.meta.json`)
/** The sidecar's key: read through openInside like any file, so a sidecar symlinked out of the root is not read. */
const sidecarKey = (key: string) => join(dirname(key), `.${basename(key)}.meta.json`)
const etagOf = (stats: { ino: number, size: number, mtimeMs: number }) => `"${stats.ino.toString(36)}-${stats.size.toString(36)}-${Math.round(stats.mtimeMs * 1000).toString(36)}"`

async function readSidecar (root: string, key: string): Promise<Sidecar> {
  try {
    const { handle } = await openInside(root, sidecarKey(key))
    try {
      return JSON.parse(await handle.readFile('utf8')) as Sidecar
    } finally {
      await handle.close()
    }
  } catch {
    return {} // none (a file put there by hand), or unreadable: the file is served without
  }
}

export function createLocalStore (settings: LocalSettings): ObjectStore {
  let root: string
  try {
    root = realpathSync(settings.root)
  } catch {
    throw new errors.SourceFetchFailed('LOCAL_FILESYSTEM_ROOT does not exist or cannot be read')
  }

  /** The directory a new object goes to, made if missing, and checked to still be under the root once made. */
  async function directoryFor (key: string): Promise<string> {
    const path = pathOf(root, key)
    await mkdir(dirname(path), { recursive: true })
    const real = await realpath(dirname(path))
    if (!inside(root, real)) throw new errors.SourceForbidden('the path leaves LOCAL_FILESYSTEM_ROOT')
    return join(real, basename(path))
  }

  async function stat (location: ObjectLocation): Promise<ObjectStat | undefined> {
    let opened
    try {
      opened = await openInside(root, location.key)
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined
      throw err
    }
    const { handle, stats } = opened
    await handle.close()
    const { metadata } = await readSidecar(root, location.key)
    return { size: stats.size, etag: etagOf(stats), lastModified: stats.mtime, metadata }
  }

  return {
    scheme: 'local',

    async read (location, { range, ifRange } = {}) {
      const { handle, stats } = await openInside(root, location.key)
      try {
        const etag = etagOf(stats)
        if (ifRange !== undefined && ifRange !== etag && ifRange !== stats.mtime.toUTCString()) throw new errors.SourceFetchFailed('the file changed while it was read (local://)')
        const asked = askedRange(range, stats.size)
        const { contentType } = await readSidecar(root, location.key)
        const facts = { size: stats.size, etag, lastModified: stats.mtime, contentType }
        if (stats.size === 0) {
          await handle.close()
          return storeAnswer(Readable.from([]), facts)
        }
        // The stream owns the descriptor from here on, and closes it when it ends or is destroyed.
        const body = createReadStream('', { fd: handle, start: asked?.start ?? 0, end: asked?.end ?? stats.size - 1, autoClose: true })
        return storeAnswer(body, facts, asked)
      } catch (err) {
        await handle.close().catch(() => {})
        throw fsError(err)
      }
    },

    stat,

    async write (location: ObjectLocation, body: Buffer | Readable, options: WriteOptions) {
      const target = await directoryFor(location.key).catch(err => { throw fsError(err) })
      const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`)
      const sidecar: Sidecar = { contentType: options.contentType, cacheControl: options.cacheControl, metadata: options.metadata }
      try {
        await writeFile(`${temp}.meta`, JSON.stringify(sidecar), { flag: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW })
        await rename(`${temp}.meta`, sidecarOf(target))
        // O_EXCL | O_NOFOLLOW: a name someone raced into place is never written through.
        const out = (await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW)).createWriteStream()
        await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, out, { signal: options.signal })
        await rename(temp, target)
        // Not fsync'd: the result store and job outputs can be made again; a crash leaves the old file or none.
      } catch (err) {
        await Promise.all([unlink(temp).catch(() => {}), unlink(`${temp}.meta`).catch(() => {})])
        throw fsError(err)
      }
      const written = await stat(location)
      return { size: written?.size ?? 0, etag: written?.etag }
    },

    async remove (location) {
      const path = pathOf(root, location.key)
      const real = await realpath(dirname(path)).catch(() => undefined)
      if (real === undefined) return // no such directory: nothing to remove
      if (!inside(root, real)) throw new errors.SourceForbidden('the path leaves LOCAL_FILESYSTEM_ROOT')
      for (const file of [join(real, basename(path)), sidecarOf(join(real, basename(path)))]) {
        await unlink(file).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw fsError(err) })
      }
    },

    async close () {}
  }
}
