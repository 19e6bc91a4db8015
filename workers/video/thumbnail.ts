// Thumbnail of an image, of one frame of a video, or of an audio file's cover art, through the same sharp step.
import { coverArt } from './cover-art.ts'
import { imageInput, render } from '../image/image.ts'
import { grabFrame } from './video.ts'
import { videoInput } from './video-input.ts'
import type { ImageResult, JobContext, ThumbnailTask } from '../../contract/types.ts'

export async function thumbnail (task: ThumbnailTask, ctx: JobContext): Promise<ImageResult> {
  const { ref, media } = task.source
  if (media.kind === 'image') return render(await imageInput(task.source, ctx, task.image), task.image, ctx)
  if (media.kind === 'audio') return render(await imageInput(await coverArt({ ...task.source, media }, ctx), ctx, task.image), task.image, ctx)
  const frame = await grabFrame(videoInput(ref), media, task.video, ctx, task.image)
  return render({ raw: frame }, task.image, ctx)
}
