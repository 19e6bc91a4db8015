// What the Docker image does, done here (no Docker engine on these machines): the build context the
// Dockerfile copies (none of them left out by .dockerignore), its `npm ci --omit=dev` (which builds the
// ffmpeg zygote), its ENV and CMD, with ffmpeg from the OS. Then one image and one video thumbnail, SIGTERM,
// exit 0.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { media } from '../media.ts'
import { freePort } from '../../load/server-process.ts'
import { processTree } from '../../load/sampler.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

/** COPY sources of the Dockerfile's final stage and its deps stage (not --from), ENV pairs, RUN npm and node lines, CMD. */
function dockerfileSteps () {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const copies = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(m => m[1]!.trim().split(/\s+/))
  const env = Object.fromEntries([...text.matchAll(/^ENV (.+)$/gm)].flatMap(m => [...m[1]!.matchAll(/(\w+)=(\S+)/g)].map(p => [p[1]!, p[2]!])))
  const npm = /^RUN (npm ci .+)$/m.exec(text)![1]!.split(/\s+/)
  const nodeRuns = [...text.matchAll(/^RUN node (.+)$/gm)].map(m => m[1]!.split(/\s+/))
  const cmd = JSON.parse(/^CMD (\[.+\])$/m.exec(text)![1]!) as string[]
  return { copies, env, npm, nodeRuns, cmd }
}

/** .dockerignore's patterns as regexps over a path from the context root (only the forms it uses: names and *). */
function dockerIgnored (): RegExp[] {
  return readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
    .map(pattern => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}(/|$)`))
}

test('production path: Dockerfile steps, then an image and a video thumbnail, then SIGTERM and exit 0', { timeout: 300_000 }, async (t) => {
  const steps = dockerfileSteps()
  const ignored = dockerIgnored()
  for (const path of steps.copies) assert.ok(!ignored.some(pattern => pattern.test(path)), `the Dockerfile copies ${path}, which .dockerignore leaves out of the context`)
  const app = tempFolder('thumbd-prod-', t)
  // The image's paths under /app are the temp dir's here.
  const env = Object.fromEntries(Object.entries(steps.env).map(([name, value]) => [name, value.replace(/^\/app(?=\/|$)/, app)]))
  for (const path of steps.copies) cpSync(join(root, path), join(app, path), { recursive: true })
  await run(steps.npm[0]!, steps.npm.slice(1), { cwd: app, timeout: 240_000 })
  assert.ok(!readdirSync(join(app, 'node_modules')).includes('typescript'), 'no dev dependencies')
  const tmp = tempFolder('thumbd-prod-tmp-', t)
  // The build-time runs (the compile cache warm-up), with the image's environment.
  for (const args of steps.nodeRuns) await run(process.execPath, args, { cwd: app, env: { ...env, PATH: process.env.PATH, TMP_DIR: tmp }, timeout: 120_000 })
  assert.ok(readdirSync(env.NODE_COMPILE_CACHE!).length > 0, 'the compile cache is warm')
  const cmd = steps.cmd

  const port = await freePort()
  // The image's Node is 24; here the same binary that runs the tests stands in for it.
  const server = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
    cwd: app,
    env: { ...env, PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', TMP_DIR: tmp, API_KEYS: 'prod-smoke-key' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = once(server, 'exit') as Promise<[number | null, string | null]>
  try {
    const base = `http://127.0.0.1:${port}`
    // Up to 2 min to start: a busy machine's start (the pool, the zygote, the tools' checks) takes well over 20 s.
    for (let i = 0; i < 1200 && !(await fetch(`${base}/health`).then(r => r.ok, () => false)); i++) await new Promise(resolve => setTimeout(resolve, 100))
    const thumbnail = async (body: Buffer, type: string) => {
      const send = () => fetch(`${base}/api/thumbnail`, { method: 'POST', body: new Uint8Array(body), headers: { authorization: 'Bearer prod-smoke-key', 'content-type': type } })
      let res = await send()
      // As a client does: a 503 OVERLOADED (on a busy machine, the event-loop guard just after start) is asked
      // again after its Retry-After, a few times; the image must then come.
      for (let tries = 0; res.status === 503 && tries < 5; tries++) {
        const refusal = await res.text()
        assert.match(refusal, /"code":"THUMBD_OVERLOADED"/, 'only a refusal for load is asked again')
        t.diagnostic(`${refusal}: again after ${res.headers.get('retry-after')} s`)
        await new Promise(resolve => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000))
        res = await send()
      }
      assert.equal(res.status, 200, await res.clone().text())
      return sharp(Buffer.from(await res.arrayBuffer())).metadata()
    }
    assert.equal((await thumbnail(await media('jpeg'), 'image/jpeg')).width, 320)
    assert.equal((await thumbnail(await media('mp4-h264'), 'video/mp4')).width, 320)
    assert.ok(processTree(server.pid!).some(p => p.comm === 'ffmpeg-zygote'), 'the build stage built the ffmpeg zygote, and the server uses it')
    const sandbox = /^thumbd_tools_info\{ffmpeg="[^"]+",sandbox="([^"]+)"\} 1$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1]
    assert.match(sandbox ?? '', /^landlock ABI \d+ \(fs, tcp, scopes\); seccomp filter yes$/, 'the build stage built the sandbox\'s exec wrapper, and the kernel gives it everything')
    server.kill('SIGTERM')
    assert.deepEqual(await exited, [0, null])
    assert.deepEqual(readdirSync(tmp), [])
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL')
  }
})
