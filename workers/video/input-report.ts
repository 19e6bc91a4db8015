// ffmpeg's input report on stderr (duration, streams, frame size, the video stream's facts): a frame run
// prints it on the way, standing in for a separate ffprobe run. Only used to choose the error code and the
// colour path; the limits themselves are enforced inside ffmpeg (-max_pixels, -max_streams).
import { parseStreamLine } from './stream-colour.ts'
import type { VideoInfo } from './probe.ts'

/** The lines of ffmpeg's input report (parseInputReport), wherever they come in its stderr; and showinfo's first frame (shownAt). */
export const REPORT_LINES = /^(Input #|Output #|Stream mapping:| {2}Duration: | {2}Stream #0:)|Picture size \d+x\d+ exceeds|Number of streams exceeds max_streams|^\[Parsed_showinfo_\d+ @ 0x[0-9a-f]+\] n: +0 /

/**
 * The time in the video of the frame a run took (FrameRequest.showTime): showinfo's pts_time counts from the
 * seek point (`-ss` before `-i` shifts every timestamp by it), so a keyframe before it is negative.
 */
export function shownAt (kept: string, seekSeconds: number): number | undefined {
  const time = /^\[Parsed_showinfo_\d+ @ 0x[0-9a-f]+\] n: +0 pts: *-?\d+ pts_time:(-?\d+(?:\.\d+)?(?:e-?\d+)?) /m.exec(kept)
  return time === null ? undefined : Math.round((seekSeconds + Number(time[1])) * 1000) / 1000
}

/**
 * Reads ffmpeg's input report. Its lines have a fixed indent ("  Duration:", "  Stream #0:"); metadata is
 * indented deeper (ffmpeg indents every line of a multi-line value too), so a crafted title cannot pass for one. Only used to choose the error code: the limits
 * themselves are enforced inside ffmpeg (-max_pixels, -max_streams).
 */
export function parseInputReport (stderr: string): VideoInfo {
  const input = stderr.split(/\nStream mapping:|\nOutput #0/)[0] ?? ''
  const d = /^ {2}Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/m.exec(input)
  // When -max_pixels refuses a frame, libavutil names the size it refused, wherever in the run: the stream's
  // line may say "unspecified size", or the size before the decoder's padding (1000x1000 allocated as 1024x1000).
  const video = /Picture size (\d+)x(\d+) exceeds specified max pixel count/.exec(stderr) ?? /^ {2}Stream #0:\d+\S*: Video: .*?, (\d+)x(\d+)/m.exec(input)
  const stream = input.split('\n').map(parseStreamLine).find(facts => facts !== undefined)
  return {
    duration: d === null ? undefined : Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]),
    width: Number(video?.[1] ?? 0),
    height: Number(video?.[2] ?? 0),
    // Demuxers that add streams as they find them (MPEG-TS) drop those past -max_streams and go on: still refused.
    streams: /Number of streams exceeds max_streams/.test(input) ? Infinity : input.match(/^ {2}Stream #0:/gm)?.length ?? 0,
    ...(stream === undefined ? {} : { stream })
  }
}
