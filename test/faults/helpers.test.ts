// The leak detector itself: it must see a decoder that escaped its helper, the very leak it is there for.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'
import { processStat } from '../../load/sampler.ts'
import { TOOL_MARKER } from '../../workers/tools/index.ts'
import { decoderChildren, decoderProcesses, gone, waitFor } from './helpers.ts'

test('decoderChildren finds an ffmpeg of this server that was re-parented, and no unmarked one', async () => {
  // sh starts ffmpeg in the background and exits: ffmpeg is re-parented (to init or a subreaper), out of
  // this process's tree, as a tool whose helper died without killing it would be.
  const run = (env: Record<string, string>) => {
    const sh = spawn('sh', ['-c', 'ffmpeg -nostdin -hide_banner -loglevel error -re -f lavfi -i testsrc=d=30:s=32x32 -f null - >/dev/null 2>&1 & echo $!'], { env: { PATH: process.env.PATH!, ...env } })
    return new Promise<number>(resolve => sh.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString()))))
  }
  const escaped = await run({ [TOOL_MARKER]: String(process.pid) })
  const stranger = await run({})
  try {
    await waitFor(() => processStat(escaped)?.comm === 'ffmpeg' && processStat(escaped)?.ppid !== process.pid, 5000, 'the escaped ffmpeg to run, re-parented')
    assert.deepEqual(decoderProcesses().map(p => p.pid), [escaped], 'the escaped one, and not the unmarked one')
    assert.deepEqual(decoderChildren(), ['ffmpeg'])
    assert.deepEqual(decoderChildren(process.pid + 1), [], "another server's marker is not ours")
  } finally {
    for (const pid of [escaped, stranger]) process.kill(pid, 'SIGKILL')
  }
  assert.ok(await gone(escaped))
  assert.deepEqual(decoderChildren(), [])
})
