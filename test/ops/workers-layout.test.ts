// workers/ in rooms (issue 49): only entry points at its top, nothing of src/ or Fastify imported, and rooms that
// import one way. Read from the sources, so a file that breaks the layout fails here before review does.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const WORKERS = join(ROOT, 'workers')

/** The files loaded by path or imported as an entry: src/plugins/jobs.ts (index.ts, and dispatch.ts inline), src/plugins/digests.ts (digest.ts). */
const ENTRY_POINTS = ['index.ts', 'dispatch.ts', 'digest.ts']

const repoPath = (path: string) => relative(ROOT, path).split(sep).join('/')

function tsFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every module a file imports: static, type-only, re-exports, dynamic and side-effect imports. */
function importsOf (file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [
    ...text.matchAll(/\bfrom\s*['"]([^'"\n]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(\s*['"]([^'"\n]+)['"]/g),
    ...text.matchAll(/^\s*import\s+['"]([^'"\n]+)['"]/gm)
  ].map(m => m[1]!)
  return [...new Set(specifiers)]
}

/** The room of a file in workers/ (its first folder), or undefined at the top. */
function roomOf (file: string): string | undefined {
  const parts = relative(WORKERS, file).split(sep)
  return parts.length > 1 ? parts[0] : undefined
}

const files = tsFiles(WORKERS)

test('workers/ holds only its entry points at its top; every other file is in a room', () => {
  const top = files.filter(file => roomOf(file) === undefined).map(file => relative(WORKERS, file)).sort()
  assert.deepEqual(top.filter(name => !ENTRY_POINTS.includes(name)), [], 'files at the top of workers/ that are not entry points: put each in a room')
  assert.deepEqual(top, [...ENTRY_POINTS].sort(), 'an entry point has moved: update src/ and this list')
})

test('nothing in workers/ imports src/ or Fastify; its relative imports stay in workers/ and contract/', () => {
  const wrong: string[] = []
  for (const file of files) {
    for (const spec of importsOf(file)) {
      if (/^(fastify|@fastify\/|fastify-plugin)/.test(spec)) wrong.push(`${repoPath(file)} imports ${spec}`)
      if (!spec.startsWith('.')) continue
      const target = repoPath(resolve(dirname(file), spec))
      if (!target.startsWith('workers/') && !target.startsWith('contract/')) wrong.push(`${repoPath(file)} imports ${target}`)
    }
  }
  assert.deepEqual(wrong, [])
})

test('rooms import one way: the graph of rooms has no cycle', () => {
  // room -> room it imports -> one import that makes the edge (for the message)
  const edges = new Map<string, Map<string, string>>()
  for (const file of files) {
    const from = roomOf(file)
    if (from === undefined) continue
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue
      const target = resolve(dirname(file), spec)
      if (!repoPath(target).startsWith('workers/')) continue
      const to = roomOf(target)
      assert.notEqual(to, undefined, `${repoPath(file)} imports the entry point ${repoPath(target)}: rooms sit below the entry points`)
      if (to === from) continue
      if (!edges.has(from)) edges.set(from, new Map())
      if (!edges.get(from)!.has(to!)) edges.get(from)!.set(to!, `${repoPath(file)} -> ${repoPath(target)}`)
    }
  }
  // Depth-first search; a room met again while still on the path closes a cycle.
  const done = new Set<string>()
  const path: string[] = []
  const visit = (room: string) => {
    if (done.has(room)) return
    const at = path.indexOf(room)
    if (at >= 0) {
      const cycle = [...path.slice(at), room]
      const why = cycle.slice(1).map((to, i) => `  ${cycle[i]} -> ${to}: ${edges.get(cycle[i]!)!.get(to)}`)
      assert.fail(`rooms that import each other: ${cycle.join(' -> ')}\n${why.join('\n')}`)
    }
    path.push(room)
    for (const next of edges.get(room)?.keys() ?? []) visit(next)
    path.pop()
    done.add(room)
  }
  for (const room of edges.keys()) visit(room)
  // The test sees the real graph: the rooms that import others do.
  assert.ok(edges.size > 0, 'no import between rooms found: the test reads nothing')
})
