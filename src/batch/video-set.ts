// A video's outputs made in one step of the pool (workers/video-set/video-set.ts): one probe for all, and one decode pass
// for the frames its poster, storyboard, preview and perceptual hash would each seek to. Each output's result (or
// its failure) is then taken by makeOutput instead of a step of its own; what the set could not make (the whole
// step failed: a timeout, a crash) each output makes alone, as before.
import { fromJobFailure, type ThumbdError } from '../errors.ts'
import type { SpooledSource } from '../sources/spool.ts'
import type { JobResults, JobTask, VideoSetMember } from '../../contract/types.ts'
import { forTask, outputTask, type RunStep } from './outputs.ts'
import type { Output } from './spec.ts'

type Prepared = { ok: true, value: JobResults[VideoSetMember['kind']] } | { ok: false, error: ThumbdError }
const MEMBERS = new Set<JobTask['kind']>(['thumbnail', 'perceptual', 'storyboard', 'preview', 'info'])
/** What the members of a set decode frames for (info reads the probe only). */
const DECODES = new Set<JobTask['kind']>(['thumbnail', 'perceptual', 'storyboard', 'preview'])

export async function prepareVideoSet (outputs: Array<Output & { name: string }>, source: SpooledSource, run: RunStep, signal: AbortSignal, timeoutMs: number): Promise<Map<string, Prepared>> {
  if (source.media?.kind !== 'video') return new Map()
  const members: Array<{ name: string, task: VideoSetMember }> = []
  for (const output of outputs) {
    let task: JobTask | undefined
    try {
      task = outputTask(output, source, () => {})
    } catch {
      continue // refused by its options or its source: makeOutput says so, as that output's error
    }
    if (task !== undefined && MEMBERS.has(task.kind)) members.push({ name: output.name, task: task as VideoSetMember })
  }
  if (members.filter(m => DECODES.has(m.task.kind)).length < 2) return new Map()
  let results: JobResults['video-set']['results']
  try {
    ({ results } = await run({ kind: 'video-set', source: forTask(source), tasks: members.map(m => m.task) }))
  } catch (err) {
    if (signal.aborted) throw err
    return new Map()
  }
  return new Map(members.map(({ name }, i) => {
    const result = results[i]!
    return [name, result.ok ? result : { ok: false, error: fromJobFailure(result.error, timeoutMs) }]
  }))
}

/**
 * Each output's RunStep: the set is made when the first output that runs a step is due (outputs before it, that
 * need none, are written first), and answers its members' tasks; others run as they would.
 */
export function videoSetSteps (outputs: Array<Output & { name: string }>, source: SpooledSource, run: RunStep, signal: AbortSignal, timeoutMs: number): (name: string) => RunStep {
  let made: Promise<Map<string, Prepared>> | undefined
  return name => async task => {
    made ??= prepareVideoSet(outputs, source, run, signal, timeoutMs)
    const prepared = (await made).get(name)
    if (prepared === undefined) return run(task)
    if (!prepared.ok) throw prepared.error
    return prepared.value as never
  }
}
