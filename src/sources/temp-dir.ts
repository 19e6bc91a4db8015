// One private folder per process under TMP_DIR: every temp file lives there, each is removed when its
// request ends, and the folder itself goes at shutdown. A process that died without its shutdown (SIGKILL,
// a crash, an OOM kill) leaves its folder behind: the next start removes every such folder. A folder is named
// after its process's pid and start time, so a new process that got the same pid (a restarted container,
// whose server is always pid 7, say) still sees the old folder as stale.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'

const FOLDER = /^thumbd-(\d+)-(\d+)-/

/** The process's start time in clock ticks since boot (/proc/<pid>/stat, field 22); undefined if it is gone or this is not Linux. */
function startTime (pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

export class TempDir {
  readonly path: string

  private constructor (path: string) {
    this.path = path
  }

  static async create (parent: string): Promise<TempDir> {
    const self = startTime(process.pid)
    // Without /proc no liveness can be told: nothing is removed, and the folder is named as before.
    if (self !== undefined) await removeStale(parent)
    return new TempDir(await mkdtemp(join(parent, `thumbd-${process.pid}-${self ?? 0}-`)))
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

/** The folders of processes that no longer run. Returns their names. */
export async function removeStale (parent: string): Promise<string[]> {
  const stale = (await readdir(parent).catch(() => [])).filter(name => {
    const match = FOLDER.exec(name)
    return match !== null && startTime(Number(match[1])) !== match[2]
  })
  await Promise.all(stale.map(name => rm(join(parent, name), { recursive: true, force: true })))
  return stale
}
