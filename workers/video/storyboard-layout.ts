// A storyboard's sprite, laid out from the video's display size before any frame is grabbed: its tiles follow
// the video's aspect ratio, so a tall video makes tall tiles, and a sheet too large to build is refused here
// (413) rather than after every tile was decoded, enlarged and held.
import { JobError } from '../../contract/job-error.ts'
import { MAX_SPRITE_PIXELS, maxSpriteSide } from '../../contract/limits.ts'
import type { StoryboardTask } from '../../contract/types.ts'

export interface SpriteLayout {
  columns: number
  rows: number
  tileWidth: number
  tileHeight: number
  width: number
  height: number
}

/** `display`: the frame's size as shown (after rotation and non-square pixels). */
export function spriteLayout (display: { width: number, height: number }, count: number, { columns: perRow, tileWidth, format }: Pick<StoryboardTask, 'columns' | 'tileWidth' | 'format'>): SpriteLayout {
  // Even, for the encoders.
  const tileHeight = Math.max(2, Math.round((tileWidth * display.height) / display.width / 2) * 2)
  const columns = Math.min(perRow, count)
  const rows = Math.ceil(count / perRow)
  const [width, height] = [columns * tileWidth, rows * tileHeight]
  const side = maxSpriteSide(format)
  // The routes refuse this when they parse the options; here for any other caller.
  if (width > side) throw new JobError('BAD_OPTIONS', `${columns} columns of ${tileWidth} px make a sprite ${width} px wide; at most ${side}`)
  if (height > side) throw new JobError('PAYLOAD_TOO_LARGE', `${rows} rows of ${tileWidth}x${tileHeight} tiles (the video's aspect ratio) make a sprite ${height} px tall; at most ${side}`)
  if (width * height > MAX_SPRITE_PIXELS) throw new JobError('PAYLOAD_TOO_LARGE', `a sprite of ${width}x${height} exceeds ${MAX_SPRITE_PIXELS} pixels: fewer or narrower tiles`)
  return { columns, rows, tileWidth, tileHeight, width, height }
}
