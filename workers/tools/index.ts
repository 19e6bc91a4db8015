// The one way to run a tool (ffmpeg, ffprobe): the jobs call runTool, the main thread calls detectTools once
// at start. Everything else in this folder (the sandbox, the zygote, the Node launcher) is behind these.
export { runTool, type ToolRun, type ToolLimits } from './run-tool.ts'
export { detectTools, TOOL_MARKER, type DetectedTools, type ToolSettings } from './detect.ts'
