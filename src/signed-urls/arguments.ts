// The arguments of imgproxy's options, one reader each (a size, a gravity, a boolean, a factor), refusing
// what is out of range by the option's name. Shared by the option handlers (options.ts) and the video
// options' readers (video-arguments.ts).
import type { Fit, Position, UrlGravity } from '../../contract/types.ts'
import { MAX_OUTPUT_SIDE } from '../../contract/limits.ts'
import { UrlOptionError, type Put, type UrlFormat } from './option-types.ts'

// imgproxy's resizing types. auto: see resolveFit. fill-down only differs from fill when the source is
// smaller than the box and enlarging is off (imgproxy crops to the box's aspect ratio): options say fillDown.
export const FITS: Record<string, Fit> = { fit: 'inside', fill: 'cover', 'fill-down': 'cover', force: 'fill', auto: 'inside' }
export const GRAVITIES: Record<string, Position> = { ce: 'centre', no: 'north', so: 'south', ea: 'east', we: 'west', noea: 'northeast', nowe: 'northwest', soea: 'southeast', sowe: 'southwest', sm: 'attention' }
export const FORMATS: Record<string, UrlFormat> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif', auto: 'auto', vtt: 'vtt' }
// Go's strconv.ParseBool; a value outside it is an error here (imgproxy warns and reads false).
export const BOOLS: Record<string, boolean> = Object.fromEntries(['1', 't', 'T', 'true', 'TRUE', 'True', '0', 'f', 'F', 'false', 'FALSE', 'False'].map((v, i) => [v, i < 6]))

export function fail (name: string, why: string): never {
  throw new UrlOptionError(`option "${name}": ${why}`)
}
export const has = (table: object, key: string) => Object.hasOwn(table, key)
export function one (name: string, args: string[], max = 1): string {
  if (args.length > max) fail(name, `takes at most ${max} argument${max > 1 ? 's' : ''}`)
  return args[0]!
}
export function pick<T> (name: string, table: Record<string, T>, value: string, what: string): T {
  return has(table, value) ? table[value]! : fail(name, `${what} "${value}" is not supported (${Object.keys(table).join(', ')})`)
}
export function resizingType (name: string, value: string): string {
  pick(name, FITS, value, 'resizing type')
  return value
}
export function side (name: string, value: string): number {
  return /^\d{1,5}$/.test(value) && Number(value) <= MAX_OUTPUT_SIDE ? Number(value) : fail(name, `"${value}" is not a size from 0 (auto) to ${MAX_OUTPUT_SIDE}`)
}
/** size's arguments: width:height:enlarge:extend...; empty ones leave the setting alone, as in imgproxy. */
export function size (name: string, [width, height, enlarge, ...extend]: string[], put: Put): void {
  if (width) put('width', side(name, width))
  if (height) put('height', side(name, height))
  if (enlarge) put('enlarge', bool(name, enlarge))
  if (extend.length > 0 && extend[0] !== '') put('extend', extendOf(name, extend))
}
/** extend's arguments: extend:gravity_type:x:y (no sm, no fp). */
export function extendOf (name: string, [on = '', ...where]: string[]): UrlGravity | undefined {
  if (!bool(name, on)) return undefined
  const gravity = where.length === 0 || where[0] === '' ? { position: 'centre' as const, x: 0, y: 0 } : gravityOf(name, where)
  if ('focus' in gravity || gravity.position === 'attention') fail(name, 'extend takes a plain gravity with offsets')
  return gravity
}
/** A number for an offset or a share: pixels, or a fraction under 1 (imgproxy's rule). */
export function decimal (name: string, value: string, min: number, max: number): number {
  return /^-?\d{1,5}(\.\d{1,6})?$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : fail(name, `"${value}" is not a number from ${min} to ${max}`)
}
/** gravity's arguments: type[:x:y] or fp:x:y. */
export function gravityOf (name: string, [type = '', x = '', y = '', ...rest]: string[]): UrlGravity {
  if (rest.length > 0) fail(name, 'takes at most 3 arguments')
  if (type === 'fp') return { focus: [decimal(name, x || '0.5', 0, 1), decimal(name, y || '0.5', 0, 1)] }
  const position = pick(name, GRAVITIES, type, 'gravity')
  if (type === 'sm' && (x || y)) fail(name, 'smart gravity takes no offsets')
  return { position, x: x ? decimal(name, x, -MAX_OUTPUT_SIDE, MAX_OUTPUT_SIDE) : 0, y: y ? decimal(name, y, -MAX_OUTPUT_SIDE, MAX_OUTPUT_SIDE) : 0 }
}
/** A positive decimal up to `max` (dpr, zoom). */
export function factor (name: string, value: string, max: number): number {
  return /^\d{1,3}(\.\d{1,6})?$/.test(value) && Number(value) > 0 && Number(value) <= max ? Number(value) : fail(name, `"${value}" is not a number over 0 and at most ${max}`)
}
export function bool (name: string, value: string): boolean {
  return has(BOOLS, value) ? BOOLS[value]! : fail(name, `"${value}" is not a boolean (1 or 0)`)
}
