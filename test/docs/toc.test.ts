// Each doc's table of contents (the list of links before its first section) in step with its sections: every
// `## ` section is linked from it, and every link in it lands on a heading, as GitHub makes their anchors. A
// section added without its TOC line (POST /api/preview, Animations) went unseen for weeks.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ROOT } from './doc-examples.ts'

/** GitHub's heading anchor: lower case, punctuation (backticks, slashes, braces, '…') dropped, spaces to '-'. */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-')
}

/** Headings outside code fences, with GitHub's anchors (a repeated one gets -1, -2, ...). */
function headings (text: string): Array<{ level: number, title: string, anchor: string }> {
  const seen = new Map<string, number>()
  return text.replace(/^```[\s\S]*?^```$/gm, '').split('\n').flatMap(line => {
    const m = /^(#{1,6})\s+(.*)$/.exec(line)
    if (m === null) return []
    const base = anchorOf(m[2]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    return [{ level: m[1]!.length, title: m[2]!, anchor: n === 0 ? base : `${base}-${n}` }]
  })
}

/** The anchors linked from the TOC: list lines between the title and the first `## `. */
function tocLinks (text: string): string[] {
  const head = text.slice(0, text.search(/^## /m))
  return head.split('\n').filter(line => /^\s*[-*] /.test(line) || /^\s+\S/.test(line)).flatMap(line => [...line.matchAll(/\]\(#([^)]+)\)/g)].map(m => m[1]!))
}

const DOCS = readdirSync(join(ROOT, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)

test('every doc with a table of contents links each of its sections, and each link lands on a heading', () => {
  const withToc = DOCS.filter(file => tocLinks(readFileSync(join(ROOT, file), 'utf8')).length > 0)
  assert.ok(withToc.includes('docs/api.md') && withToc.length >= 3, `docs with a TOC: ${withToc}`)
  for (const file of withToc) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const links = tocLinks(text)
    const all = headings(text)
    const anchors = new Set(all.map(h => h.anchor))
    assert.deepEqual(links.filter(link => !anchors.has(link)), [], `${file}: TOC links that land on no heading`)
    assert.deepEqual(all.filter(h => h.level === 2 && !links.includes(h.anchor)).map(h => h.title), [], `${file}: sections missing from its TOC`)
  }
})

test('anchors are GitHub\'s', () => {
  assert.equal(anchorOf('`GET /i/{signature}/{options…}/{source}`'), 'get-isignatureoptionssource')
  assert.equal(anchorOf('`GET /health`, `GET /health/live`'), 'get-health-get-healthlive')
  assert.equal(anchorOf('Camera photos: the decode scale, not the decoder'), 'camera-photos-the-decode-scale-not-the-decoder')
})
