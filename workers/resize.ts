// Resize/convert of an image (videos go to thumbnail).
import { imageInput, render } from './image.ts'
import { JobError } from '../contract/job-error.ts'
import type { ImageResult, JobContext, ResizeTask } from '../contract/types.ts'

export async function resize (task: ResizeTask, ctx: JobContext): Promise<ImageResult> {
  if (task.source.media.kind !== 'image') throw new JobError('UNSUPPORTED_MEDIA', 'resize takes images; use /api/thumbnail for videos')
  return render(await imageInput(task.source, ctx, task.image), task.image, ctx)
}
