// One headless Chromium page driven over the DevTools protocol (Node's own WebSocket): screenshots at chosen
// moments of one page load. Chromium's --screenshot takes one per load, and its --timeout runs on a clock that
// image animations do not always follow; captureScreenshot paints the page as it is now.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'

export interface ChromiumPage {
  evaluate (expression: string): Promise<unknown>
  screenshot (): Promise<Buffer>
  /** Resolves once Chromium has exited: until then it may still write to its profile. */
  close (): Promise<void>
}

export async function openPage (url: string, { profile, windowSize = '1400,700' }: { profile: string, windowSize?: string }): Promise<ChromiumPage> {
  const child = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', `--window-size=${windowSize}`, '--remote-debugging-port=0', `--user-data-dir=${profile}`, url], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  const port = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk
      const match = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(stderr)
      if (match !== null) resolve(match[1]!)
    })
    child.on('exit', code => reject(new Error(`chromium exited ${code}: ${stderr}`)))
  })
  let target: { type: string, webSocketDebuggerUrl: string } | undefined
  for (let tries = 0; target === undefined && tries < 50; tries++, await sleep(100)) {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ type: string, webSocketDebuggerUrl: string }>
    target = list.find(t => t.type === 'page')
  }
  const ws = new WebSocket(target!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => { ws.addEventListener('open', resolve); ws.addEventListener('error', reject) })
  let lastId = 0
  const call = (method: string, params: object = {}) => new Promise<Record<string, any>>((resolve, reject) => {
    const id = ++lastId
    ws.addEventListener('message', function reply (event) {
      const message = JSON.parse(String(event.data)) as { id?: number, result?: Record<string, any>, error?: { message: string } }
      if (message.id !== id) return
      ws.removeEventListener('message', reply)
      if (message.error !== undefined) reject(new Error(`${method}: ${message.error.message}`))
      else resolve(message.result!)
    })
    ws.send(JSON.stringify({ id, method, params }))
  })
  return {
    evaluate: async (expression) => (await call('Runtime.evaluate', { expression, returnByValue: true })).result?.value,
    screenshot: async () => Buffer.from((await call('Page.captureScreenshot')).data as string, 'base64'),
    close: async () => {
      ws.close()
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill()
      await exited
    }
  }
}
