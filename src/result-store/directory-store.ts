// RESULT_STORAGE=file:///dir: the result store in a directory, behind the same ObjectStore interface as the
// bucket stores. Whole or not at all: an entry is written to a temp file beside its place, then renamed
// (rename is atomic on one filesystem), so a reader sees the old entry, the new one or none, never a part.
// Bounded: the entries this process knows of (those found at start, those it wrote since) are kept in
// write order with their sizes, and the oldest are removed once their total passes RESULT_STORAGE_BYTES.
// Replicas sharing one directory each keep that bound over what they know, so together they may hold up
// to one bound each (docs/operations.md).
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join, dirname, sep } from 'node:path'
import { Readable } from 'node:stream'
import type { ObjectLocation, ObjectStat, ObjectStore, ReadOptions, StoreAnswer, Written, WriteOptions } from '../stores/store.ts'

/** A temp file older than this at start was left by a process that died while writing: removed. */
const STALE_TEMP_MS = 60_000

export interface DirectoryStoreOptions {
  root: string
  maxBytes: number
  /** Told of each entry removed to keep the bound (metrics). */
  onEvict?: (count: number) => void
}

export class DirectoryStore implements ObjectStore {
  readonly scheme = 'local' as const
  readonly root: string
  readonly #maxBytes: number
  readonly #onEvict: (count: number) => void
  /** Known entries by path, oldest write first (a Map keeps insertion order). */
  readonly #sizes = new Map<string, number>()
  #total = 0
  /** The scan of what an earlier run left; writes meanwhile are counted at once and kept newer. */
  readonly scanned: Promise<void>

  constructor ({ root, maxBytes, onEvict = () => {} }: DirectoryStoreOptions) {
    this.root = root
    this.#maxBytes = maxBytes
    this.#onEvict = onEvict
    this.scanned = this.#scan()
    // Whoever opened the store logs a failed scan; the store still works (each operation fails on its own).
    this.scanned.catch(() => {})
  }

  /** Bytes of the entries this process knows of. */
  get bytes (): number { return this.#total }

  #path ({ key }: ObjectLocation): string {
    const path = join(this.root, key)
    // Keys are the result store's own hex paths; anything that would leave the root is a bug, refused.
    if (!path.startsWith(this.root + sep)) throw new Error('a result store key left its directory')
    return path
  }

  async read (location: ObjectLocation, { range }: ReadOptions = {}): Promise<StoreAnswer> {
    // Entries are small replies: one read, no stream to set up (a hit's cost is mostly this).
    const bytes = await readFile(this.#path(location))
    const match = range === undefined ? null : /^bytes=(\d+)-(\d*)$/.exec(range)
    if (match === null) return { statusCode: 200, headers: { 'content-length': String(bytes.length) }, body: Readable.from([bytes]) }
    const start = Number(match[1])
    const end = Math.min(bytes.length - 1, match[2] === '' ? Infinity : Number(match[2]))
    const part = bytes.subarray(start, end + 1)
    return { statusCode: 206, headers: { 'content-length': String(part.length), 'content-range': `bytes ${start}-${end}/${bytes.length}` }, body: Readable.from([part]) }
  }

  async stat (location: ObjectLocation): Promise<ObjectStat | undefined> {
    try {
      const info = await stat(this.#path(location))
      return { size: info.size, lastModified: info.mtime }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  async write (location: ObjectLocation, body: Buffer | Readable, { signal }: WriteOptions): Promise<Written> {
    const path = this.#path(location)
    const bytes = Buffer.isBuffer(body) ? body : Buffer.concat(await body.toArray())
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
    await mkdir(dirname(path), { recursive: true })
    try {
      await writeFile(temp, bytes, { signal })
      await rename(temp, path)
    } catch (err) {
      await unlink(temp).catch(() => {})
      throw err
    }
    this.#known(path, bytes.length)
    await this.#keepBound()
    return { size: bytes.length }
  }

  async remove (location: ObjectLocation): Promise<void> {
    const path = this.#path(location)
    this.#forget(path)
    await unlink(path).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err })
  }

  async close (): Promise<void> {
    await this.scanned.catch(() => {})
  }

  #known (path: string, size: number): void {
    this.#forget(path)
    this.#sizes.set(path, size)
    this.#total += size
  }

  #forget (path: string): void {
    const size = this.#sizes.get(path)
    if (size === undefined) return
    this.#sizes.delete(path)
    this.#total -= size
  }

  /** Removes the oldest entries until the rest fit the bound. */
  async #keepBound (): Promise<void> {
    const doomed: string[] = []
    for (const [path, size] of this.#sizes) {
      if (this.#total <= this.#maxBytes) break
      this.#sizes.delete(path)
      this.#total -= size
      doomed.push(path)
    }
    if (doomed.length === 0) return
    this.#onEvict(doomed.length)
    await Promise.all(doomed.map(path => unlink(path).catch(() => {})))
  }

  /** What an earlier run (or another replica) left: its entries join the bound, oldest first; dead temp files go. */
  async #scan (): Promise<void> {
    await mkdir(this.root, { recursive: true })
    const found: Array<{ path: string, size: number, time: number }> = []
    for (const first of await hexFolders(this.root)) {
      for (const second of await hexFolders(join(this.root, first))) {
        const folder = join(this.root, first, second)
        for (const name of await readdir(folder).catch(() => [])) {
          const path = join(folder, name)
          const info = await stat(path).catch(() => undefined)
          if (info === undefined || !info.isFile()) continue
          if (name.endsWith('.tmp')) {
            if (Date.now() - info.mtimeMs > STALE_TEMP_MS) await unlink(path).catch(() => {})
          } else {
            found.push({ path, size: info.size, time: info.mtimeMs })
          }
        }
      }
    }
    // Entries written during the scan are newer than anything found: they stay last in line.
    const written = [...this.#sizes]
    this.#sizes.clear()
    this.#total = 0
    for (const { path, size } of found.sort((a, b) => a.time - b.time)) this.#known(path, size)
    for (const [path, size] of written) this.#known(path, size)
    await this.#keepBound()
  }
}

async function hexFolders (folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[])
  return names.filter(name => /^[0-9a-f]{2}$/.test(name))
}
