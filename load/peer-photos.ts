// The photos of `npm run bench -- --peer imgproxy=PATH --photos DIR`: every still image in DIR of a format thumbd
// serves (JPEG, PNG, WebP, AVIF, HEIC/HEIF, GIF), named by its bytes as thumbd names it (contract/sniff.ts), not by
// its extension. Animations are left out: both servers keep them animated, a different job that
// `npm run bench:animation` measures. Every file left out is listed with why, so a set is never smaller unseen.
import { open, readdir } from 'node:fs/promises'
import { extname, join } from 'node:path'
import sharp from 'sharp'
import { SNIFF_BYTES, sniff, type ImageFormat } from '../contract/sniff.ts'

/** The extensions read; the format itself comes from the bytes. */
export const PHOTO_EXTENSIONS = ['.jpg', '.jpeg', '.png', '.webp', '.avif', '.heic', '.heif', '.gif']

export interface PeerPhoto { name: string, format: ImageFormat, mime: string, width: number, height: number }
export interface SkippedFile { name: string, why: string }

async function head (path: string): Promise<Uint8Array> {
  const file = await open(path)
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES)
    const { bytesRead } = await file.read(buffer, 0, SNIFF_BYTES, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await file.close()
  }
}

export async function listPeerPhotos (dir: string): Promise<{ photos: PeerPhoto[], skipped: SkippedFile[] }> {
  const photos: PeerPhoto[] = []
  const skipped: SkippedFile[] = []
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const { name } = entry
    if (!entry.isFile()) continue
    if (!PHOTO_EXTENSIONS.includes(extname(name).toLowerCase())) {
      skipped.push({ name, why: `not ${PHOTO_EXTENSIONS.join(', ')}` })
      continue
    }
    const path = join(dir, name)
    const media = sniff(await head(path))
    if (media?.kind !== 'image') {
      skipped.push({ name, why: media === undefined ? 'its bytes are no format thumbd serves' : `its bytes are ${media.kind} (${media.format})` })
      continue
    }
    // sharp reads the header only (HEIC too: libheif parses it without an HEVC decoder); pages for animations.
    const meta = await sharp(path, { animated: true }).metadata().catch(() => undefined)
    if (meta === undefined || meta.width === undefined || meta.height === undefined) {
      skipped.push({ name, why: `its ${media.format} header does not read` })
      continue
    }
    if ((meta.pages ?? 1) > 1) {
      skipped.push({ name, why: `animated ${media.format} (${meta.pages} frames): npm run bench:animation compares those` })
      continue
    }
    photos.push({ name, format: media.format, mime: media.mime, width: meta.width, height: meta.pageHeight ?? meta.height })
  }
  return { photos, skipped }
}
