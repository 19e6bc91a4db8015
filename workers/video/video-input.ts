// Where ffmpeg reads a video from: its spooled file, or, for a remote video served with range support,
// thumbd's loopback range reader (src/sources/range-reader.ts), which fetches only the byte ranges ffmpeg
// asks for. Either way the tool reaches that one input and nothing else: the file alone is readable in its
// sandbox, or the reader's port alone is connectable (native/sandbox.c), with the protocols to match.
import { JobError } from '../../contract/job-error.ts'
import type { SourceRef } from '../../contract/types.ts'

export interface VideoInput {
  /** ffmpeg's -i: "file:" keeps a path from ever being read as another protocol. */
  url: string
  /** -protocol_whitelist: file, or http over tcp to the reader; never both, never anything else. */
  protocols: 'file' | 'http,tcp'
  /** What the sandbox lets the tool open. */
  reads: string[]
  connectPort?: number
}

export function videoInput (ref: SourceRef): VideoInput {
  if (ref.location === 'file') return { url: `file:${ref.path}`, protocols: 'file', reads: [ref.path] }
  if (ref.location === 'remote') return { url: ref.url, protocols: 'http,tcp', reads: [], connectPort: ref.port }
  throw new JobError('INTERNAL', 'internal error', 'video sources must be spooled to a file or read through the range reader')
}

/** What runTool needs of an input: the sandbox's openings. */
export const toolAccess = ({ reads, connectPort }: VideoInput) => connectPort === undefined ? { reads } : { reads, connectPort }
