// Resize/convert of an image (videos go to thumbnail).
import { imageInput, render } from './image.ts'
import { JobError } from '../../contract/job-error.ts'
import type { ImageResult, JobContext, ResizeTask } from '../../contract/types.ts'

export async function resize (task: ResizeTask, ctx: JobContext): Promise<ImageResult> {
  if (task.source.media.kind !== 'image') throw new JobError('UNSUPPORTED_MEDIA', 'resize takes images; use /api/thumbnail for videos')
  // dpr, zoom, min sizes and crops make the output larger than width x height asks, or from a part of the
  // photo: the full HEIC photo then, never its embedded thumbnail, and no reduction on load; the output format
  // still says whether an animation is kept whole.
  const { url, format, animated, fit } = task.image
  const scaled = url !== undefined && (url.dpr !== 1 || url.zoom[0] !== 1 || url.zoom[1] !== 1 || url.minWidth !== undefined || url.minHeight !== undefined || url.ops !== undefined)
  return render(await imageInput(task.source, ctx, scaled ? { format, animated, fit } : task.image), task.image, ctx)
}
