// The decoder sandbox (native/sandbox.c), as the server applies it: a shell run in it the way ffmpeg is run
// (through thumbd-sandbox-exec, and forked from a zygote) tries what a hostile input's exploit would, and
// each attempt fails, while reading its own input still works; and a real job's ffmpeg is seen confined.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Sandbox } from '../../../contract/types.ts'
import { detectTools, runTool, TOOL_MARKER } from '../../../workers/tools/index.ts'
import { AUTH, build } from '../../helper.ts'
import { mediaPath } from '../../media.ts'
import { waitFor } from '../../faults/helpers.ts'
import { tempFolder } from '../../temp-folder.ts'

const BASH = execFileSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim()

/** Each line: "<what> ok" when the shell could do it, "<what> denied" when it could not. */
const ATTACKS = `
try () { if eval "$2"; then echo "$1 ok"; else echo "$1 denied"; fi; }
try own-input ': < "$INPUT"'
try server-environ ': < /proc/$SERVER/environ'
try other-fd 'exec 4> /proc/$SERVER/fd/1'
try other-temp-file ': < "$OTHER"'
try create-file ': > "$DIR/created"'
try list-temp-dir 'compgen -G "$DIR/*" >&2'
try tcp-connect 'exec 5<> /dev/tcp/127.0.0.1/$PORT'
try signal-server 'kill -0 $SERVER'
( echo subprocess ok )
`

const EXPECTED = {
  'own-input': 'ok',
  'server-environ': 'denied',
  'other-fd': 'denied',
  'other-temp-file': 'denied',
  'create-file': 'denied',
  'list-temp-dir': 'denied',
  subprocess: 'denied',
  'tcp-connect': 'denied',
  'signal-server': 'denied'
}

async function attack (sandbox: Sandbox) {
  const dir = mkdtempSync(join(tmpdir(), 'thumbd-attack-'))
  const input = join(dir, 'input')
  const other = join(dir, 'other-job')
  writeFileSync(input, 'mine')
  writeFileSync(other, 'not mine')
  // A listener on loopback, so that a refused connect is the sandbox's doing, not a closed port.
  const listener = createServer(socket => socket.destroy())
  await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve))
  const port = (listener.address() as { port: number }).port
  try {
    const script = `INPUT=${input}; OTHER=${other}; DIR=${dir}; SERVER=${process.pid}; PORT=${port}\n${ATTACKS}`
    const { stdout } = await runTool(BASH, ['-c', script], {
      signal: AbortSignal.timeout(10_000), maxStdoutBytes: 1 << 16, children: new SharedArrayBuffer(4), sandbox, reads: [input], anyExitCode: true
    })
    const results = Object.fromEntries(stdout.toString().trim().split('\n').map(line => line.split(' ')))
    // A subshell that could not be forked prints nothing (bash may stop there: it is the last line).
    return { ...results, subprocess: results.subprocess ?? 'denied' }
  } finally {
    listener.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

test('a shell in the sandbox, started afresh and forked from a zygote, can read its input and nothing else of the server', async () => {
  const detected = await detectTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', zygote: 'auto', env: { PATH: process.env.PATH! } })
  assert.equal(detected.confinementMissing, false, `this host gives every mechanism: ${detected.confinement}`)
  const limits = { addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10 }
  // Started afresh: through thumbd-sandbox-exec, as the Node launcher starts tools.
  assert.deepEqual(await attack({ ...detected.sandbox, ...limits, zygote: undefined }), EXPECTED, 'started afresh')
  // Forked: a zygote of bash (the zygote serves whichever tool it is loaded into).
  assert.deepEqual(await attack({ ...detected.sandbox, ...limits }), EXPECTED, 'forked from a zygote')
})

/**
 * The status of this process's decoders that have run for a while (found by the marker every tool carries;
 * 50 ms of CPU: well into main(), past the moment between the zygote's fork and the sandbox).
 */
function decoderStatus (): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter(p => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${TOOL_MARKER}=${process.pid}`)) continue
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number)
      // Not the zygote itself (a child of this process, loading ffmpeg's libraries): the tools it forks.
      const forkedOrLaunched = !new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)
      if (/^Name:\s+ffmpeg$/m.test(status) && forkedOrLaunched && utime! + stime! >= 5) found.push(status)
    } catch {}
  }
  return found
}

for (const zygote of ['auto', 'off']) {
  test(`the server's own ffmpeg runs confined: no capabilities, no new privileges, a seccomp filter (FFMPEG_ZYGOTE=${zygote})`, async (t) => {
    const app = await build(t, { FFMPEG_ZYGOTE: zygote })
    assert.match((await app.inject({ url: '/metrics' })).body, /^thumbd_tools_info\{ffmpeg="[^"]+",sandbox="landlock ABI \d+ \(fs, tcp, scopes\); seccomp filter yes"\} 1$/m)
    const job = app.inject({ method: 'POST', url: '/api/thumbnail?at=8', headers: { ...AUTH, 'content-type': 'video/mp4' }, payload: readFileSync(await mediaPath('slow-seek')) })
    let status: string[] = []
    await waitFor(() => (status = decoderStatus()).length > 0, 10_000, 'the job\'s ffmpeg')
    assert.match(status[0]!, /^NoNewPrivs:\s+1$/m)
    assert.match(status[0]!, /^Seccomp:\s+2$/m)
    assert.match(status[0]!, /^CapEff:\s+0+$/m)
    assert.match(status[0]!, /^CapBnd:\s+0+$/m)
    assert.equal((await job).statusCode, 200)
  })
}

test('given the range reader\'s port, a sandboxed shell connects there and to no other port, by no other kind of socket', async () => {
  const detected = await detectTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', zygote: 'auto', env: { PATH: process.env.PATH! } })
  assert.equal(detected.portConfinement, true, detected.confinement)
  const listen = async () => {
    const server = createServer(socket => socket.destroy())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return server
  }
  const [reader, other] = [await listen(), await listen()]
  const port = (server: ReturnType<typeof createServer>) => (server.address() as { port: number }).port
  const script = `
try () { if eval "$2"; then echo "$1 ok"; else echo "$1 denied"; fi; }
try reader-port 'exec 5<> /dev/tcp/127.0.0.1/${port(reader)}'
try other-port 'exec 6<> /dev/tcp/127.0.0.1/${port(other)}'
try udp 'exec 7<> /dev/udp/127.0.0.1/${port(reader)}'
`
  try {
    for (const zygote of [undefined, detected.sandbox.zygote]) {
      const { stdout } = await runTool(BASH, ['-c', script], {
        signal: AbortSignal.timeout(10_000),
        maxStdoutBytes: 1 << 16,
        children: new SharedArrayBuffer(4),
        anyExitCode: true,
        sandbox: { ...detected.sandbox, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10, zygote },
        connectPort: port(reader)
      })
      const results = Object.fromEntries(stdout.toString().trim().split('\n').map(line => line.split(' ')))
      assert.deepEqual(results, { 'reader-port': 'ok', 'other-port': 'denied', udp: 'denied' }, zygote === undefined ? 'started afresh' : 'forked from a zygote')
    }
  } finally {
    reader.close()
    other.close()
  }
})

/** What a compiled exploit would try with a TCP socket in hand, each line "<what> ok|denied". */
const SOCKET_TRICKS = String.raw`
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
static struct sockaddr_in at (int port) { struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) }; inet_pton(AF_INET, "127.0.0.1", &a.sin_addr); return a; }
static void say (const char *what, int ok) { printf("%s %s\n", what, ok ? "ok" : "denied"); }
int main (int argc, char **argv) {
  int reader = atoi(argv[1]), other = atoi(argv[2]);
  struct sockaddr_in a = at(reader);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  say("reader-port", s >= 0 && connect(s, (void *)&a, sizeof a) == 0);
  a = at(other); s = socket(AF_INET, SOCK_STREAM, 0);
  say("fast-open-elsewhere", s >= 0 && sendto(s, "x", 1, MSG_FASTOPEN, (void *)&a, sizeof a) >= 0);
  s = socket(AF_INET, SOCK_STREAM, 0);
  say("listen-unbound", s >= 0 && listen(s, 1) == 0);
  a = at(0); s = socket(AF_INET, SOCK_STREAM, 0);
  say("bind", s >= 0 && bind(s, (void *)&a, sizeof a) == 0);
  say("ipv6", socket(AF_INET6, SOCK_STREAM, 0) >= 0);
  return 0;
}
`

test('with a TCP socket allowed, what Landlock\'s port rule does not see is refused: TCP Fast Open elsewhere, listen without bind, bind, IPv6', async (t) => {
  const detected = await detectTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', zygote: 'auto', env: { PATH: process.env.PATH! } })
  const dir = tempFolder('thumbd-socket-tricks-', t)
  writeFileSync(join(dir, 'tricks.c'), SOCKET_TRICKS)
  execFileSync('cc', ['-O1', '-o', join(dir, 'tricks'), join(dir, 'tricks.c')])
  const listen = async () => {
    const server = createServer(socket => socket.destroy())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return server
  }
  const [reader, other] = [await listen(), await listen()]
  let reachedOther = false
  other.on('connection', () => { reachedOther = true })
  const port = (server: ReturnType<typeof createServer>) => (server.address() as { port: number }).port
  try {
    for (const zygote of [undefined, detected.sandbox.zygote]) {
      const { stdout } = await runTool(join(dir, 'tricks'), [String(port(reader)), String(port(other))], {
        signal: AbortSignal.timeout(10_000),
        maxStdoutBytes: 1 << 16,
        children: new SharedArrayBuffer(4),
        anyExitCode: true,
        sandbox: { ...detected.sandbox, addressSpaceBytes: 4 * 2 ** 30, cpuSeconds: 10, zygote },
        connectPort: port(reader),
        reads: [dir]
      })
      const results = Object.fromEntries(stdout.toString().trim().split('\n').map(line => line.split(' ')))
      assert.deepEqual(results, { 'reader-port': 'ok', 'fast-open-elsewhere': 'denied', 'listen-unbound': 'denied', bind: 'denied', ipv6: 'denied' }, zygote === undefined ? 'started afresh' : 'forked from a zygote')
    }
    assert.equal(reachedOther, false, 'nothing reached the other port')
  } finally {
    reader.close()
    other.close()
  }
})
