// A real load balancer in front of thumbd replicas, for load/replicas.ts: HAProxy (Debian's `haproxy`
// package: apt-get install -y haproxy) in HTTP mode, round robin, keep-alive, on a free loopback port. Each
// reply names the replica that answered in X-Replica. Stopped with SIGTERM.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './server-process.ts'

export interface Balancer {
  base: string
  stop (): Promise<void>
}

export async function startHaproxy (replicas: string[], folder: string): Promise<Balancer> {
  const port = await freePort()
  const config = join(folder, 'haproxy.cfg')
  writeFileSync(config, [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend thumbd',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  http-response set-header X-Replica %[srv_name]',
    ...replicas.map((base, n) => `  server r${n + 1} ${new URL(base).host}`),
    ''
  ].join('\n'))
  const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-2000) })
  const spawned = await Promise.race([once(child, 'spawn').then(() => true), once(child, 'error').then(() => false)])
  if (!spawned) throw new Error('haproxy could not be started: apt-get install -y haproxy')
  const base = `http://127.0.0.1:${port}`
  const until = Date.now() + 10_000
  while (await fetch(`${base}/health/live`).then(r => r.status !== 200, () => true)) {
    if (child.exitCode !== null || Date.now() > until) {
      child.kill('SIGKILL')
      throw new Error(`haproxy did not come up: ${stderr.trim()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return {
    base,
    async stop () {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  }
}
