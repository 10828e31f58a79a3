/** Why a message, or a whole run, stopped. */
import * as t from 'io-ts'

/**
 * `stop`, `length`, `toolUse`, `refusal` come from the model; `error` and
 * `aborted` from the stream; `maxTurns` and `policyStop` from the loop itself.
 */
export const StopReason = t.keyof(
  {
    stop: null,
    length: null,
    toolUse: null,
    error: null,
    aborted: null,
    refusal: null,
    maxTurns: null,
    policyStop: null,
  },
  'StopReason',
)
export type StopReason = t.TypeOf<typeof StopReason>
