// What the Docker image does, done here (no Docker engine on these machines): the build context the
// Dockerfile copies (none of them left out by .dockerignore), its deps stage (`npm ci --omit=dev`, which
// builds native/, then the node_modules pruning) and its final stage (ENV, the compile-cache warm-up, CMD),
// with the host's ffmpeg in place of the ffmpeg stage's build (which takes ~10 minutes; its lists are checked
// by ffmpeg-build.test.ts). Then an image, a video, a HEIC and an HDR video thumbnail, SIGTERM, exit 0.
import assert from 'node:assert/strict'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { media } from '../media.ts'
import { corpus } from '../video-corpus.ts'
import { makeHeic } from '../heic-media.ts'
import { freePort } from '../../load/server-process.ts'
import { processTree } from '../../load/sampler.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

/** The Dockerfile's stages by name (the last one, the image, as ''), continuation lines joined. */
function dockerfileStages (): Map<string, string> {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const stages = new Map<string, string>()
  for (const stage of text.split(/^(?=FROM )/m).filter(part => part.startsWith('FROM '))) stages.set(/^FROM \S+(?: AS (\S+))?/.exec(stage)![1] ?? '', stage)
  return stages
}

/**
 * What the deps stage and the image do: COPY sources (not --from), ENV pairs, the npm ci line, the deps
 * stage's `sh scripts/...` runs, the image's `node` runs, CMD, and the native binaries the image takes from deps.
 */
function dockerfileSteps () {
  const stages = dockerfileStages()
  const [deps, image] = [stages.get('deps')!, stages.get('')!]
  const both = deps + image
  const sources = (text: string) => [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap(m => m[1]!.trim().split(/\s+/))
  const copies = sources(both)
  // Every stage's, the ffmpeg stage's too: what the build context must hold.
  const context = [...stages.values()].flatMap(sources)
  const env = Object.fromEntries([...image.matchAll(/^ENV (.+)$/gm)].flatMap(m => [...m[1]!.matchAll(/(\w+)=(\S+)/g)].map(p => [p[1]!, p[2]!])))
  const npm = /^RUN (npm ci .+)$/m.exec(deps)![1]!.split(/\s+/)
  const scripts = [...deps.matchAll(/^RUN sh (scripts\/.+)$/gm)].map(m => m[1]!.split(/\s+/))
  const nodeRuns = [...image.matchAll(/^RUN node (.+)$/gm)].map(m => m[1]!.split(/\s+/))
  const cmd = JSON.parse(/^CMD (\[.+\])$/m.exec(image)![1]!) as string[]
  const native = /^COPY --from=deps (.+) \.\/native\/$/m.exec(image)![1]!.split(/\s+/).map(path => path.replace(/^\/app\/native\//, ''))
  return { copies, context, env, npm, scripts, nodeRuns, cmd, native }
}

/** .dockerignore's patterns as regexps over a path from the context root (only the forms it uses: names and *). */
function dockerIgnored (): RegExp[] {
  return readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
    .map(pattern => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}(/|$)`))
}

/** What npm ci's postinstall builds in native/ (scripts/build-zygote.sh's `-o native/NAME`). */
function nativeBuilt (): string[] {
  // Each name once: a binary with a fallback build (image-decode for JPEG only) has two -o lines.
  return [...new Set([...readFileSync(join(root, 'scripts/build-zygote.sh'), 'utf8').matchAll(/-o native\/(\S+)/g)].map(m => m[1]!))]
}

/** Files under `dir` that scripts/prune-node-modules.sh removes (licences kept). */
function prunable (dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(path => /\.(map|ts|mts|cts|md|markdown)$/.test(path) && !/^(licen[cs]e|copying)/i.test(path.split('/').pop()!))
}

test('production path: Dockerfile steps, then an image, a video, a HEIC and an HDR video thumbnail, then SIGTERM and exit 0', { timeout: 300_000 }, async (t) => {
  const steps = dockerfileSteps()
  assert.deepEqual(steps.native.toSorted(), nativeBuilt().toSorted(), 'the image takes every binary npm ci builds in native/')
  const ignored = dockerIgnored()
  for (const path of steps.context) assert.ok(!ignored.some(pattern => pattern.test(path)), `the Dockerfile copies ${path}, which .dockerignore leaves out of the context`)
  const app = tempFolder('thumbd-prod-', t)
  // The image's paths under /app are the temp dir's here.
  const env = Object.fromEntries(Object.entries(steps.env).map(([name, value]) => [name, value.replace(/^\/app(?=\/|$)/, app)]))
  for (const path of steps.copies) cpSync(join(root, path), join(app, path), { recursive: true })
  await run(steps.npm[0]!, steps.npm.slice(1), { cwd: app, timeout: 240_000 })
  assert.ok(!readdirSync(join(app, 'node_modules')).includes('typescript'), 'no dev dependencies')
  for (const name of steps.native) assert.ok(existsSync(join(app, 'native', name)), `npm ci built native/${name}`)
  // The deps stage's scripts after npm ci (the node_modules pruning): the server below runs on what they leave.
  for (const args of steps.scripts) await run('sh', args, { cwd: app, timeout: 120_000 })
  assert.deepEqual(prunable(join(app, 'node_modules')), [], 'no source maps, TypeScript or Markdown left in node_modules')
  // image-decode links sharp's own libvips in node_modules (its rpath): it loads from what the image keeps (usage: 64).
  assert.equal(spawnSync(join(app, 'native', 'image-decode'), []).status, 64, 'native/image-decode finds its libvips in the pruned node_modules')
  const tmp = tempFolder('thumbd-prod-tmp-', t)
  const tmpMedia = tempFolder('thumbd-prod-media-', t)
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
    assert.equal((await thumbnail(await makeHeic(tmpMedia, 'smoke', '640x480'), 'image/heic')).width, 320)
    // HEVC Main 10, HLG, BT.2020: tone-mapped by zscale.
    assert.equal((await thumbnail(await corpus('hlg'), 'video/mp4')).width, 320)
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
