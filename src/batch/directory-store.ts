// A destination folder, behind the ObjectStore interface of src/stores/store.ts, so a job writes to it as it will
// to a bucket: whole or not at all (a temp file in the same folder, renamed into place), with an ETag. Keys are
// paths below the folder that destination.ts has already checked. The bucket stores (and the local store of
// src/stores/) plug in through the same interface once they land.
import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { errors } from '../errors.ts'
import type { ObjectLocation, ObjectStat, ObjectStore, StoreAnswer, Written } from '../stores/store.ts'

/** The ETag of bytes written here: their SHA-256, as a strong validator. */
const etagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`

async function bytesOf (body: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body
  const chunks: Buffer[] = []
  for await (const chunk of body) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/**
 * The temp files of earlier writes of this file that never got renamed: their writer was killed (SIGKILL, a lost
 * replica). The file is whole now; the parts would stay beside it for good.
 */
async function removeLeftParts (file: string) {
  const base = `${basename(file)}.`
  const names = await readdir(dirname(file)).catch(() => [] as string[])
  await Promise.all(names.filter(n => n.startsWith(base) && /^[0-9a-f-]{36}\.partial$/.test(n.slice(base.length))).map(n => rm(join(dirname(file), n), { force: true })))
}

export function createDirectoryStore (root: string): ObjectStore {
  const path = ({ key }: ObjectLocation) => join(root, key)
  return {
    scheme: 'local',
    async read (location): Promise<StoreAnswer> {
      const file = path(location)
      const found = await stat(file).catch(() => undefined)
      if (found === undefined) throw new errors.SourceFetchFailed(`no file ${location.key} in the destination`)
      return { statusCode: 200, headers: { 'content-length': String(found.size) }, body: createReadStream(file) }
    },
    async stat (location): Promise<ObjectStat | undefined> {
      const found = await stat(path(location)).catch(() => undefined)
      return found === undefined ? undefined : { size: found.size, lastModified: found.mtime }
    },
    async write (location, body): Promise<Written> {
      const file = path(location)
      const bytes = await bytesOf(body)
      await mkdir(dirname(file), { recursive: true })
      // Renamed within one folder: a reader sees the old file or the whole new one, never a part.
      const temp = `${file}.${randomUUID()}.partial`
      try {
        await writeFile(temp, bytes)
        await rename(temp, file)
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
      await removeLeftParts(file)
      return { size: bytes.byteLength, etag: etagOf(bytes) }
    },
    async remove (location) {
      await rm(path(location), { force: true })
    },
    async close () {}
  }
}
