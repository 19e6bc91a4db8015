// One private folder per process under TMP_DIR: every temp file lives there, each is removed when its
// request ends, and the folder itself goes at shutdown, so a crash mid-request leaves at most one folder.
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'

export class TempDir {
  readonly path: string

  private constructor (path: string) {
    this.path = path
  }

  static async create (parent: string): Promise<TempDir> {
    return new TempDir(await mkdtemp(join(parent, `thumbd-${process.pid}-`)))
  }

  /** A fresh path inside the folder; nothing is created yet. */
  newFile (): string {
    return join(this.path, randomUUID())
  }

  async remove (file: string): Promise<void> {
    await rm(file, { force: true })
  }

  async destroy (): Promise<void> {
    await rm(this.path, { recursive: true, force: true })
  }
}
