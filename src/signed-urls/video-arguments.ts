// The video options' arguments, as imgproxy (Pro) writes them: video_thumbnail_tile (a storyboard),
// video_thumbnail_animation (a looping preview) and the seconds of video_thumbnail_second and at.
import { MAX_OUTPUT_SIDE, MAX_PREVIEW_FRAMES, MAX_PREVIEW_SIDE, MAX_STORYBOARD_TILES } from '../../contract/limits.ts'
import { bool, fail } from './arguments.ts'
import type { UrlPreview, UrlStoryboard } from './option-types.ts'

/** video_thumbnail_tile:step:columns:rows:tile_width:tile_height, as imgproxy Pro writes it; the tile height follows the video. */
export function storyboard (name: string, args: string[]): UrlStoryboard {
  const [step = '', columns = '', rows = '', tileWidth = '', tileHeight = '', ...rest] = args
  const whole = (value: string, min: number, max: number, what: string) =>
    /^\d{1,4}$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `${what} "${value}" is not a whole number from ${min} to ${max}`)
  if (tileHeight !== '' && tileHeight !== '0') fail(name, 'the tile height follows the video\'s aspect ratio: give 0')
  if (rest.some(arg => arg !== '' && arg !== '0')) fail(name, 'extend_tile, trim, fill and focus are not supported')
  const board: UrlStoryboard = { columns: whole(columns, 1, 50, 'columns'), rows: whole(rows, 1, 200, 'rows'), tileWidth: tileWidth === '' || tileWidth === '0' ? 160 : whole(tileWidth, 16, 640, 'tile_width') }
  if (board.columns * board.rows > MAX_STORYBOARD_TILES) fail(name, `at most ${MAX_STORYBOARD_TILES} tiles (columns x rows)`)
  if (board.columns * board.tileWidth > MAX_OUTPUT_SIDE) fail(name, `columns x tile_width makes a sprite over ${MAX_OUTPUT_SIDE} px wide`)
  if (step !== '' && Number(step) !== 0) {
    if (!/^\d{1,4}(\.\d{1,3})?$/.test(step) || Number(step) < 0.1) fail(name, `step "${step}" is not seconds from 0.1 to 9999 (0: columns x rows over the whole video)`)
    board.step = Number(step)
  }
  return board
}

/**
 * video_thumbnail_animation:step:delay:frames:frame_width:frame_height:extend_frame:trim:fill:focus_x:focus_y, as
 * imgproxy Pro writes it. step 0 (its default) is no animation; a negative step spreads the frames over the video.
 * A focus other than the centre is refused by name (sharp crops by gravity, not by a point).
 */
export function preview (name: string, args: string[]): UrlPreview | undefined {
  const [step = '', delay = '', frames = '', width = '', height = '', extend = '', trim = '', fill = '', focusX = '', focusY = '', ...rest] = args
  if (rest.length > 0) fail(name, 'takes at most 10 arguments')
  const whole = (value: string, min: number, max: number, what: string) =>
    /^\d{1,5}$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `${what} "${value}" is not a whole number from ${min} to ${max}`)
  if (!/^-?\d{1,5}(\.\d{1,3})?$/.test(step || '0')) fail(name, `step "${step}" is not seconds (negative: spread over the video)`)
  if (Number(step || 0) === 0) return undefined
  for (const [what, value] of [['focus_x', focusX], ['focus_y', focusY]]) {
    if (value !== '' && Number(value) !== 0.5) fail(name, `${what} "${value}" is not supported (only the centre, 0.5)`)
  }
  const flag = (value: string) => value !== '' && bool(name, value)
  const frameWidth = width === '' ? 0 : whole(width, 0, MAX_PREVIEW_SIDE, 'frame_width')
  const frameHeight = height === '' ? 0 : whole(height, 0, MAX_PREVIEW_SIDE, 'frame_height')
  if (frameWidth + frameHeight > 0 && Math.min(frameWidth || 16, frameHeight || 16) < 16) fail(name, 'frame_width and frame_height are 0 (auto) or at least 16')
  return {
    ...(Number(step) > 0 ? { step: Math.max(0.04, Number(step)) } : {}),
    delay: delay === '' || delay === '0' ? 100 : whole(delay, 20, 10000, 'delay (ms)'),
    frames: whole(frames, 1, MAX_PREVIEW_FRAMES, 'frames'),
    frameWidth: frameWidth === 0 && frameHeight === 0 ? 320 : frameWidth,
    frameHeight,
    fit: flag(fill) ? 'cover' : flag(extend) ? 'contain' : 'inside',
    trim: flag(trim)
  }
}

export function seconds (name: string, value: string, percent: boolean): string {
  const match = /^(\d{1,6}(?:\.\d{1,3})?)(p?)$/.exec(value)
  if (match === null || (match[2] && !percent)) fail(name, `"${value}" is not ${percent ? 'seconds (12.5) or a percentage (10p)' : 'seconds (12.5)'}`)
  if (match[2] && Number(match[1]) > 100) fail(name, `"${value}" is over 100%`)
  return `${Number(match[1])}${match[2] ? '%' : ''}`
}
