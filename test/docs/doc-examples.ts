// The shell examples of the README and docs/api.md, as a newcomer would run them: each ```sh block that talks
// to thumbd (or prepares its .env) runs in a shell, with only the addresses changed (thumbd on loopback for
// http://localhost:3000, a loopback origin for https://example.com/ and for the README's own loopback origin,
// http://127.0.0.1:8000/). Shims on PATH report every curl's
// status and run `npm run sign-url` exactly as package.json's script does, in the folder of the example's .env.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface ShellBlock {
  /** e.g. README.md:60 */
  where: string
  code: string
}

/** Every ```sh block of a file of the checkout. */
export function shellBlocks (file: string): ShellBlock[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(m => ({
    where: `${file}:${text.slice(0, m.index).split('\n').length}`,
    code: m[1]!
  }))
}

/** Blocks that talk to thumbd, sign for it or write its .env run; the others install, build or deploy. */
export const talksToThumbd = ({ code }: ShellBlock) => /localhost:3000|sign-url|>> \.env/.test(code)
export const setsUpOrDeploys = ({ code }: ShellBlock) => /npm (ci|start|test|run (dev|lint|typecheck|load|bench|fuzz))|docker |kubectl |python3 -m http\.server /.test(code)
export const needsServer = ({ code }: ShellBlock) => code.includes('localhost:3000')

/** Lines that run commands (not comments), and the curl calls among them. */
const commands = (code: string) => code.split('\n').filter(line => !line.trimStart().startsWith('#'))
export const curlCalls = (code: string) => commands(code).join('\n').match(/(?:^|[\s(])curl\s/gm)?.length ?? 0
/** The files the block's curl calls write (-o NAME). */
export const outputs = (code: string) => [...commands(code).join('\n').matchAll(/\s-o\s+(\S+)/g)].map(m => m[1]!)
/** The README's local recipe: an origin on loopback port 8000 (python3 -m http.server). */
export const LOCAL_ORIGIN = 'http://127.0.0.1:8000/'
/** The local files (@name) and origin files (https://example.com/name, http://127.0.0.1:8000/name) the block reads. */
export const inputs = (code: string) => [...code.matchAll(/@([\w.-]+\.\w+)|(?:https:\/\/example\.com|http:\/\/127\.0\.0\.1:8000)\/([\w.-]+)/g)].map(m => m[1] ?? m[2]!)
/** The HTML pages a block writes (> page.html). */
export const pages = (code: string) => [...commands(code).join('\n').matchAll(/>\s*([\w.-]+\.html)\b/g)].map(m => m[1]!)
/** curl's -f/--fail, which hides thumbd's JSON message on an error (--fail-with-body keeps it). */
export const failsSilently = (code: string) => /(?:^|\s)(?:-[a-zA-Z]*f[a-zA-Z]*|--fail)(?=\s)/.test(commands(code).join('\n').replace(/--fail-with-body/g, ''))

/** The example as it runs here: thumbd's and the origin's loopback addresses. */
export function localised (code: string, thumbd: string, origin: string): string {
  return code.replaceAll('http://localhost:3000', thumbd).replaceAll('https://example.com/', `${origin}/`).replaceAll(LOCAL_ORIGIN, `${origin}/`)
}

/** A folder of shims put first on PATH: curl reports its status on stderr; npm runs package.json's sign-url. */
export async function shims (dir: string): Promise<string> {
  const bin = join(dir, '.bin')
  mkdirSync(bin, { recursive: true })
  const curl = (await run('sh', ['-c', 'command -v curl'])).stdout.trim()
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['sign-url']!
  const [node, ...args] = script.split(' ').map(word => word.startsWith('scripts/') ? join(ROOT, word) : word)
  if (node !== 'node') throw new Error(`package.json's sign-url script no longer starts with node: ${script}`)
  const files = {
    curl: `#!/bin/sh\nexec '${curl}' -w '%{stderr}HTTP %{http_code}\\n' "$@"\n`,
    // npm run [--silent] sign-url [--] ARGS: the script's own command line, run where the example's .env is.
    npm: '#!/bin/sh\n[ "$1" = run ] || exit 97; shift\n[ "$1" = --silent ] && shift\n[ "$1" = sign-url ] || exit 98; shift\n' +
      `[ "$1" = -- ] && shift\nexec '${process.execPath}' ${args.map(a => `'${a}'`).join(' ')} "$@"\n`
  }
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(bin, name), text)
    chmodSync(join(bin, name), 0o755)
  }
  return bin
}

export interface Ran { stdout: string, stderr: string, statuses: number[] }

/** Runs one block with sh -e in `dir`, the shims first on PATH and KEY set (docs/api.md's blocks use it unset). */
export async function runBlock (code: string, dir: string, bin: string, key: string): Promise<Ran> {
  const { stdout, stderr } = await run('sh', ['-e', '-c', code], {
    cwd: dir,
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, KEY: key },
    // Minutes, not seconds: a busy machine runs the jobs niced behind its other work.
    timeout: 300_000,
    maxBuffer: 1 << 26
  })
  return { stdout, stderr, statuses: [...stderr.matchAll(/^HTTP (\d{3})$/gm)].map(m => Number(m[1])) }
}
