// Thumbnail of an image, or of one frame of a video, through the same sharp step.
import { imageInput, render } from './image.ts'
import { JobError } from '../contract/job-error.ts'
import { grabFrame } from './video.ts'
import type { ImageResult, JobContext, ThumbnailTask } from '../contract/types.ts'

export async function thumbnail (task: ThumbnailTask, ctx: JobContext): Promise<ImageResult> {
  const { ref, media } = task.source
  if (media.kind === 'image') return render(await imageInput(task.source, ctx), task.image, ctx)
  if (ref.location !== 'file') throw new JobError('INTERNAL', 'internal error', 'video sources must be spooled to a file')
  const frame = await grabFrame(ref.path, media, task.video, ctx, task.image)
  return render({ raw: frame }, task.image, ctx)
}
