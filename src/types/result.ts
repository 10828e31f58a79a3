/** The outcome of one run of the loop. */
import * as t from 'io-ts'
import { struct } from './codec.js'
import { AgentMessage } from './message.js'
import { StopReason } from './stop-reason.js'
import { Cost, Usage } from './usage.js'

export const AgentResult = struct(
  'AgentResult',
  {
    /** The messages this run added to the transcript, in order (prompts included). */
    messages: t.readonlyArray(AgentMessage),
    stopReason: StopReason,
    /** Summed over every assistant message of the run. */
    usage: Usage,
    cost: Cost,
  },
  {
    /** For `error`: what went wrong. For `policyStop`/`maxTurns`/`aborted`: why, in words. */
    error: t.string,
    /** Which policy stopped the run, for `policyStop`. */
    stoppedBy: t.string,
  },
)
export type AgentResult = t.TypeOf<typeof AgentResult>
