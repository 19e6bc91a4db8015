// What each scenario sends. Every one is a single request shape repeated by autocannon.
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import type { SampleMedia } from './media.ts'

export const SCENARIO_NAMES = ['video', 'video-url', 'image', 'resize', 'hash'] as const
export type ScenarioName = (typeof SCENARIO_NAMES)[number]

export interface Request {
  path: string
  contentType: string
  body: Buffer
  describe: string
}

export async function scenarioRequest (name: ScenarioName, media: SampleMedia, staticBase?: string): Promise<Request> {
  switch (name) {
    case 'video':
      return { path: '/api/thumbnail?at=1', contentType: 'video/mp4', body: await readFile(media.video), describe: `upload of ${basename(media.video)}, frame at 1 s -> 320 px JPEG` }
    case 'video-url':
      return {
        path: '/api/thumbnail',
        contentType: 'application/json',
        body: Buffer.from(JSON.stringify({ url: `${staticBase}/${basename(media.video)}`, at: 1 })),
        describe: `${basename(media.video)} fetched by URL from a loopback static server, frame at 1 s -> 320 px JPEG`
      }
    case 'image':
      return { path: '/api/thumbnail', contentType: 'image/jpeg', body: await readFile(media.photo), describe: `upload of ${basename(media.photo)} -> 320 px JPEG` }
    case 'resize':
      return { path: '/api/resize?width=1024&format=webp', contentType: 'image/jpeg', body: await readFile(media.photoSmall), describe: `upload of ${basename(media.photoSmall)} -> 1024 px WebP` }
    case 'hash':
      return { path: '/api/hash?algorithms=sha256', contentType: 'video/mp4', body: await readFile(media.video), describe: `upload of ${basename(media.video)} -> sha256 + pHash + ThumbHash of a frame` }
  }
}
