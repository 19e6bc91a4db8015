// A throwaway PostgreSQL server from Debian's packages (apt-get install postgresql; scripts/install-os-deps.sh
// installs it), for the tests of the shared job queue and load/jobs-kill.ts: a temp data folder, an ephemeral port
// on loopback, trust auth, removed at stop. PostgreSQL refuses to run as root (CI runs as root): then initdb and the
// server run as the `postgres` user the package creates.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

export interface PostgresServer {
  /** postgres://thumbd@127.0.0.1:PORT/postgres */
  url: string
  stop (): Promise<void>
}

/** The newest PostgreSQL's binaries Debian's packages put under /usr/lib/postgresql/<version>/bin, if any. */
export function postgresBin (): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter(v => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
  return versions.length === 0 ? undefined : join(root, versions[0]!, 'bin')
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

export async function startPostgres (): Promise<PostgresServer> {
  const bin = postgresBin()
  if (bin === undefined) throw new Error('no PostgreSQL here: apt-get install postgresql (scripts/install-os-deps.sh does)')
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-pg-'))
  const asRoot = userInfo().uid === 0
  // As root: the folder is the postgres user's, and the tools run as that user (setpriv execs them: signals reach the server itself).
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString())
    chownSync(dir, uid, gid)
  }
  const as = (command: string, args: string[]): [string, string[]] => asRoot ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', join(bin, command), ...args]] : [join(bin, command), args]
  const data = join(dir, 'data')
  execFileSync(...as('initdb', ['-D', data, '-U', 'thumbd', '--auth=trust', '--no-sync', '-E', 'UTF8']), { stdio: 'ignore' })
  const port = await freePort()
  const server: ChildProcess = spawn(...as('postgres', ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=60', '-c', 'shared_buffers=16MB']), { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  server.stderr!.on('data', chunk => { log = (log + chunk).slice(-4000) })
  const until = Date.now() + 30_000
  for (;;) {
    try {
      execFileSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
      break
    } catch {
      if (Date.now() > until || server.exitCode !== null) throw new Error(`PostgreSQL did not start: ${log}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  return {
    url: `postgres://thumbd@127.0.0.1:${port}/postgres`,
    async stop () {
      if (server.exitCode === null) {
        const exited = new Promise(resolve => server.once('exit', resolve))
        // SIGINT: PostgreSQL's fast shutdown (clients cut off, no waiting for them).
        server.kill('SIGINT')
        await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
        if (server.exitCode === null) server.kill('SIGKILL')
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
