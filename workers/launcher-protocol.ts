// What a pool thread and its launcher process (launcher.ts, launcher-process.ts) say to each other.

export type LaunchRequest =
  | { id: number, argv: string[] }
  | { id: number, signal: NodeJS.Signals }

export const FRAME = { stdout: 1, stderr: 2, exit: 3, error: 4 } as const
export type FrameType = (typeof FRAME)[keyof typeof FRAME]

/** id (u32 LE), type (u8), payload length (u32 LE). */
export const FRAME_HEADER_BYTES = 9

export interface ExitPayload { code: number | null, signal: NodeJS.Signals | null }
export interface ErrorPayload { code?: string, message: string }
