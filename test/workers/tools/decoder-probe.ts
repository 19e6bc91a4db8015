// What the confinement and crash tests of native/image-decode share (image-decode.test.ts for its JPEG path,
// still-decode.test.ts for PNG, WebP and GIF): the probe's run and what it reports, and the decoder processes of
// this test process.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from '../../../contract/types.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { runTool } from '../../../workers/tools/index.ts'

/**
 * image-decode run on `input` with the probe (DIR/probe.so, preloaded by the caller's env) inside: what each of its
 * attempts gave (open-passwd, connect-server-port, read-server-memory: ok or denied) and whether it could exec.
 */
export async function probeDecoder (args: string[], input: string, dir: string, sandbox: Sandbox): Promise<Record<string, string>> {
  const { stdout, stderr } = await runTool(IMAGE_DECODE_FILE, [...args, input], {
    // The probe may be read too: a tool started afresh maps it after the sandbox is entered (the zygote, before).
    signal: AbortSignal.timeout(20_000), maxStdoutBytes: 1 << 22, children: new SharedArrayBuffer(4), sandbox, reads: [input, join(dir, 'probe.so')], anyExitCode: true
  })
  const results = Object.fromEntries(stderr.trim().split('\n').filter(line => / (ok|denied)$/.test(line)).map(line => line.split(' ')))
  return { ...results, exec: stdout.toString().includes('exec ok') ? 'ok' : 'denied' }
}

/** The pids of image-decode processes forked for this process (their parent or grandparent: this process). */
export function imageDecoders (): number[] {
  const found: number[] = []
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(image-decode)')) continue
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const grandparent = Number(readFileSync(`/proc/${parent}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      if (parent === process.pid || grandparent === process.pid) found.push(Number(pid))
    } catch {}
  }
  return found
}
