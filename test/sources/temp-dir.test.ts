// Temp folders of processes that died without their shutdown are removed at the next start; live ones stay.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { TempDir } from '../../src/sources/temp-dir.ts'
import { tempFolder } from '../temp-folder.ts'

test('a start removes the folders of dead processes (also one whose pid is now ours), never a live one', async (t) => {
  const parent = tempFolder('thumbd-stale-', t)
  // A process that ran and is gone: its pid is free (or reused, with another start time).
  const dead = spawnSync('true').pid!
  const stale = [`thumbd-${dead}-1-abc`, `thumbd-${process.pid}-1-sameaspid`]
  for (const name of stale) {
    mkdirSync(join(parent, name))
    writeFileSync(join(parent, name, 'partial-upload'), 'x')
  }
  mkdirSync(join(parent, 'thumbd-test-tmp-keep'))
  const live = await TempDir.create(parent)
  const alsoLive = await TempDir.create(parent)
  assert.ok(existsSync(live.path), 'the first folder of this process survives the second start')
  assert.deepEqual(readdirSync(parent).sort(), [live.path, alsoLive.path, join(parent, 'thumbd-test-tmp-keep')].map(p => p.slice(parent.length + 1)).sort())
  await live.destroy()
  await alsoLive.destroy()
})
