// imgproxy's URL dialect (options/parser/*.go, handlers/path.go of imgproxy 4.0.12) read into thumbd's own
// options. Pure: no Fastify, no I/O, so the route, the sign-url script and the tests share it. Stricter
// than imgproxy on purpose: an option thumbd cannot honour, or a value imgproxy would quietly read as
// false, is a 400 naming it, never a silently different image.
import { DEFAULT_QUALITY } from '../../contract/limits.ts'
import type { Fit } from '../../contract/types.ts'
import { FITS, FORMATS, has } from './arguments.ts'
import { UrlOptionError, type Draft, type Put, type ThumbdUrlOptions } from './option-types.ts'
import { canonical, HANDLERS, UNSUPPORTED } from './options.ts'

export { UrlOptionError, type ThumbdUrlOptions, type UrlFormat } from './option-types.ts'

/** Store URLs, by their scheme (src/stores/location.ts parses the rest when the source is fetched). */
const STORE_URL = /^(s3|gs|abs|local):\/\//i

/** Longest path taken (after /i/{signature}); longer is refused before any parsing. */
export const MAX_PATH_LENGTH = 8192

export interface ParsedPath {
  /** Absolute http(s) URL, as WHATWG URL parsing normalises it; or a store URL (s3://, gs://, abs://, local://) as written, checked when fetched. */
  source: string
  /** From "@ext" (plain) or ".ext" (base64), as written. */
  extension?: string
  options: ThumbdUrlOptions
}

/**
 * undoes what proxies and browsers do to paths, as imgproxy's RedenormalizePath does: "%3A" back to ":" in
 * the options, "http:/x" back to "http://x" in a plain source. The route verifies the signature over this
 * result (which starts with '/'), as imgproxy does, so URLs that a CDN rewrote still match.
 */
export function redenormalizePath (path: string): string {
  const rest = path.replace(/^\//, '')
  const cut = rest.startsWith('plain/') ? -1 : rest.indexOf('/plain/')
  const [options, plain] = rest.startsWith('plain/') ? ['', rest.slice(6)] : cut < 0 ? [rest, undefined] : [rest.slice(0, cut), rest.slice(cut + 7)]
  const fixed = plain === undefined
    ? options.replaceAll('%3A', ':')
    : `${options.replaceAll('%3A', ':')}/plain/${plain.replace(/^(\S+):\/([^/])/, (_, scheme: string, next: string) => `${scheme}://${scheme === 'local' ? '/' : ''}${next}`)}`
  const go = fixed.replace(/^\//, '') // imgproxy trims one '/', then signs with one in front if none is left
  return go.startsWith('/') ? go : `/${go}`
}

/**
 * Reads the path after /i/{signature}: options, then `plain/<percent-encoded URL>[@ext]` or `<base64url
 * URL, may be split by '/'>[.ext]`. Precedence, as imgproxy: the `default` preset, then the presets named by
 * pr in order (nested presets before their own options), then the URL's own options, each in order: a later
 * setting overrides an earlier one (w:1/s:2 is width 2), and the extension overrides any format option.
 * Give it the path as received: it applies redenormalizePath itself (which is not idempotent on odd paths).
 * The route checks the signature first, over redenormalizePath(path), so a forged URL is a 403, not a 400.
 */
export function parseProcessingPath (path: string, presets: Readonly<Record<string, string>> = {}): ParsedPath {
  if (path.length > MAX_PATH_LENGTH) throw new UrlOptionError('the URL is too long')
  const parts = redenormalizePath(path).slice(1).split('/')
  if (has(FITS, parts[0]!)) throw new UrlOptionError('imgproxy\'s basic URL format (/fit/300/300/...) is not supported: use rs:fit:300:300')
  // As imgproxy: options are the leading segments with a ':'; the source starts at the first without one.
  const firstSource = parts.findIndex(part => !part.includes(':'))
  const sourceParts = firstSource < 0 ? [] : parts.slice(firstSource)

  const draft: Draft = {}
  const apply = (segments: string[], stack: string[]) => {
    const options = segments.map(segment => segment.split(':'))
    const named = options.filter(([name]) => canonical(name!) === 'preset')
    if (named.length > 1) throw new UrlOptionError(`option "${named[1]![0]}" is repeated`)
    for (const name of new Set(named[0]?.slice(1))) applyPreset(name, stack)
    for (const [name = '', ...args] of options) {
      if (canonical(name) === 'preset') continue
      // As imgproxy: options apply in order, so a later one overrides what an earlier one set (w:100/rs:fit:300).
      const put: Put = (field, value) => {
        draft[field] = value
      }
      const handler = HANDLERS.get(canonical(name))
      if (handler === undefined) throw new UrlOptionError(UNSUPPORTED.has(name) ? `option "${name}" is not supported by thumbd` : `unknown option "${name}"`)
      handler(args, put, name)
    }
  }
  const applyPreset = (name: string, stack: string[]) => {
    if (!Object.hasOwn(presets, name)) throw new UrlOptionError(`unknown preset "${name}"`)
    if (stack.includes(name)) throw new UrlOptionError(`preset "${name}" includes itself`)
    const segments = presets[name]!.split('/').filter(Boolean)
    const bad = segments.find(segment => !segment.includes(':'))
    if (bad !== undefined) throw new UrlOptionError(`preset "${name}" has "${bad}", which is not an option`)
    apply(segments, [...stack, name])
  }
  if (Object.hasOwn(presets, 'default')) applyPreset('default', [])
  apply(firstSource < 0 ? parts : parts.slice(0, firstSource), [])

  const { source, extension } = decodeSource(sourceParts)
  if (extension !== undefined) {
    const lower = extension.toLowerCase()
    if (!has(FORMATS, lower)) throw new UrlOptionError(`the extension "${extension}" is not supported (${Object.keys(FORMATS).join(', ')})`)
    // As imgproxy: the extension wins over any format option.
    draft.format = FORMATS[lower]!
  }
  return { source, extension, options: finish(draft) }
}

/** For config at start: every preset parses, so a typo there is not first met by a user's request. */
export function checkPresets (presets: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(presets)) parseProcessingPath(`/pr:${name}/plain/http://preset.invalid/`, presets)
}

function decodeSource (parts: string[]): { source: string, extension?: string } {
  if (parts.join('') === '') throw new UrlOptionError('the source URL is missing')
  let text: string | undefined
  let extension: string | undefined
  if (parts[0] === 'plain' && parts.length > 1) {
    let encoded = parts.slice(1).join('/')
    // "@ext" at the last '@' only when it reads as an extension: in "a@2x.png" the '@' is the URL's own.
    const at = encoded.lastIndexOf('@')
    if (at >= 0 && /^[A-Za-z0-9]{0,8}$/.test(encoded.slice(at + 1))) [encoded, extension] = [encoded.slice(0, at), encoded.slice(at + 1)]
    try {
      text = decodeURIComponent(encoded)
    } catch {
      throw new UrlOptionError('the source URL has invalid percent-encoding')
    }
  } else {
    // base64url, possibly split by '/' (joined back without it), padding tolerated, then ".ext".
    const [encoded, ext, ...more] = parts.join('').split('.')
    if (more.length > 0) throw new UrlOptionError('the source has more than one extension')
    const bare = encoded!.replace(/=+$/, '')
    extension = ext
    if (/^[A-Za-z0-9_-]+$/.test(bare) && bare.length % 4 !== 1) {
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(bare, 'base64url'))
      } catch {}
    }
    if (text === undefined) throw new UrlOptionError('the source is neither plain/<URL> nor valid base64url')
  }
  // A store URL is not normalised (WHATWG would resolve "a/../b" into another key): src/stores/location.ts reads it.
  if (STORE_URL.test(text)) return { source: text, extension: extension || undefined }
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {}
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    // "https%3A%2F%2F..." after the one decoding: the client encoded the URL twice.
    throw new UrlOptionError(/^(https?|s3|gs|abs|local)%3a/i.test(text) ? 'the source URL is percent-encoded twice' : 'the source must be an absolute http or https URL, or a store URL (s3://, gs://, abs://, local:///)')
  }
  return { source: url.href, extension: extension || undefined }
}

function finish (draft: Draft): ThumbdUrlOptions {
  const width = draft.width || undefined
  const height = draft.height || undefined
  const type = draft.type ?? 'fit' // imgproxy's default
  const options: ThumbdUrlOptions = {
    width,
    height,
    fit: FITS[type]!,
    ...(type === 'auto' && width !== undefined && height !== undefined ? { autoFit: true as const } : {}),
    position: draft.position,
    withoutEnlargement: draft.enlarge !== true, // imgproxy never enlarges unless asked
    quality: draft.quality || undefined,
    format: draft.format,
    background: draft.background ?? undefined,
    at: draft.at,
    frame: draft.frame,
    storyboard: draft.storyboard,
    cacheBuster: draft.cacheBuster,
    fillDown: type === 'fill-down' && width !== undefined && height !== undefined ? true : undefined,
    dpr: draft.dpr === 1 ? undefined : draft.dpr,
    zoom: draft.zoom?.[0] === 1 && draft.zoom[1] === 1 ? undefined : draft.zoom,
    minWidth: draft.minWidth,
    minHeight: draft.minHeight,
    expires: draft.expires,
    filename: draft.filename,
    attachment: draft.attachment,
    formatQuality: draft.formatQuality === undefined || Object.keys(draft.formatQuality).length === 0 ? undefined : draft.formatQuality,
    maxBytes: draft.maxBytes,
    skipProcessing: draft.skipProcessing?.length ? draft.skipProcessing : undefined,
    gravity: draft.gravity,
    crop: draft.crop,
    rotate: draft.rotate,
    flip: draft.flip,
    blur: draft.blur,
    sharpen: draft.sharpen,
    padding: draft.padding,
    extend: draft.extend,
    extendAspect: draft.extendAspect,
    preview: draft.preview,
    animated: draft.animated
  }
  if (options.preview !== undefined && options.storyboard !== undefined) throw new UrlOptionError('video_thumbnail_animation and video_thumbnail_tile cannot be combined')
  if (options.format === 'vtt' && options.storyboard === undefined) throw new UrlOptionError('a .vtt is the WebVTT of a storyboard: add video_thumbnail_tile')
  // Unset settings are left out, so that equal options compare equal however they were reached.
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as unknown as ThumbdUrlOptions
}

function pick (options: ThumbdUrlOptions, keys: Array<keyof ThumbdUrlOptions>): Record<string, unknown> {
  return Object.fromEntries(keys.filter(key => options[key] !== undefined).map(key => [key, options[key]]))
}

/** imgproxy's rs:auto: fill (cover) when the source and the box lean the same way (square counts as landscape), else fit (inside). */
export function resolveFit (options: ThumbdUrlOptions, sourceWidth: number, sourceHeight: number): Fit {
  if (options.autoFit !== true) return options.fit
  return (sourceWidth >= sourceHeight) === (options.width! >= options.height!) ? 'cover' : 'inside'
}

/**
 * A stable plain object for the ETag: sorted keys, defaults filled, and settings that cannot change the
 * output folded (any fit but fill with one side given; position where nothing is cropped), so equal requests
 * written differently (w:300, s:300:0, rs:fill:300:0) share a tag. It only merges what gives equal bytes.
 */
export function normalisedOptions (options: ThumbdUrlOptions, defaults = { quality: DEFAULT_QUALITY }): Record<string, unknown> {
  const oneSide = (options.width === undefined) !== (options.height === undefined)
  const autoFit = options.autoFit === true && !oneSide
  const fit = autoFit ? 'auto' : oneSide && options.fit !== 'fill' ? 'inside' : options.fit
  const crops = fit === 'auto' || fit === 'cover' || fit === 'contain'
  const plain: Record<string, unknown> = {
    at: options.at ?? null,
    background: options.background ?? null,
    cacheBuster: options.cacheBuster ?? null,
    fit,
    format: options.format ?? null,
    frame: options.frame ?? 'exact',
    height: options.height ?? null,
    position: crops ? options.position ?? 'centre' : 'centre',
    quality: options.quality ?? defaults.quality,
    storyboard: options.storyboard ?? null,
    width: options.width ?? null,
    withoutEnlargement: options.withoutEnlargement,
    // imgproxy's geometry and output settings: only when set, so that tags of URLs without them stay as they were.
    ...pick(options, ['fillDown', 'dpr', 'zoom', 'minWidth', 'minHeight', 'filename', 'attachment', 'formatQuality', 'maxBytes', 'skipProcessing',
      'gravity', 'crop', 'rotate', 'flip', 'blur', 'sharpen', 'padding', 'extend', 'extendAspect']),
    // Only when set, so the tags of URLs without them stay as they were.
    ...(options.animated === false ? { animated: false } : {}),
    ...(options.preview === undefined ? {} : { preview: options.preview })
  }
  return Object.fromEntries(Object.keys(plain).sort().map(key => [key, plain[key]]))
}
