/**
 * The stage protocol of a turn, checked. A turn receives one state and must
 * answer it with its events and exactly one state, in which the library's
 * stages have run in their order: `startTurn` before `streamLlm` before
 * `dispatchTools` before `decideContinuation`. A pipeline that breaks this
 * fails the run with a {@link TurnProtocolError} that says what is wrong and
 * at which stage it shows, rather than ending the run silently or hanging.
 *
 * Three kinds of checks:
 * - each stage checks the state it receives (e.g. `dispatchTools` refuses a
 *   turn the model has not answered);
 * - `runTurns` checks each turn's last state (e.g. `continuation` unset);
 * - a per-run {@link TurnLedger} tells `runTurns` where the state is: the
 *   stages built with `onTurnState` report when they hold it asynchronously
 *   and when they pass it on. A state that has neither come out of the
 *   pipeline nor is held by such a stage when the work in progress returns
 *   was dropped (a `filter`, a `toArray`).
 */
import type { TurnState } from './turn-state.js'
import { hasToolCall } from '../types/message.js'

/** A custom turn broke the stage protocol. `stage` names the stage where it shows, when known. */
export class TurnProtocolError extends Error {
  override readonly name = 'TurnProtocolError'
  constructor(
    message: string,
    readonly stage?: string,
  ) {
    super(message)
  }
}

/**
 * Where the state of the turn in flight is, for one run: kept by `runTurns`,
 * reported to by the stages built with `onTurnState` that were subscribed
 * during the run's subscription.
 */
export interface TurnLedger {
  /** How many stages hold the state asynchronously (an inner Observable that has not emitted its state yet). */
  held: number
  /** The last stage that passed a state on (for the error messages). */
  lastStage: string | undefined
  /** Called by a stage after an asynchronous inner passed the state on: the work in progress has returned. */
  settle(): void
}

let current: TurnLedger | undefined

/** Runs `subscribe` with `ledger` as the one the stages subscribed inside it report to. */
export function withLedger(ledger: TurnLedger, subscribe: () => void): void {
  const outer = current
  current = ledger
  try {
    subscribe()
  } finally {
    current = outer
  }
}

/** The ledger of the run being subscribed, if any: read by a stage when it is subscribed. */
export const currentLedger = (): TurnLedger | undefined => current

const code = (name: string): string => `\`${name}\``

/** `stage` saw a state that `before` should already have handled. */
export function outOfOrder(stage: string, what: string, before: string): TurnProtocolError {
  return new TurnProtocolError(`${code(stage)} saw ${what}: ${code(before)} must come before ${code(stage)} in the turn`, stage)
}

/** Whether the answer of this turn has tool calls that have no results yet. */
export function hasUnansweredCalls(state: TurnState): boolean {
  const answer = state.assistant
  if (answer === undefined || state.toolResults.length > 0) return false
  return hasToolCall(answer)
}

/** Where the protocol's stages are named in an error about a whole turn. */
const seen = (ledger: TurnLedger | undefined): string =>
  ledger?.lastStage === undefined ? '' : ` (the last stage that passed the state on was ${code(ledger.lastStage)})`

/**
 * What is wrong with a turn's last state, or `undefined`. A state that stops
 * the run is not checked: stages let it pass untouched.
 */
export function endOfTurnViolation(state: TurnState, ledger?: TurnLedger): TurnProtocolError | undefined {
  if (state.stop !== undefined) return undefined
  const where = seen(ledger)
  const missing = (problem: string, stage: string, note = ''): TurnProtocolError =>
    new TurnProtocolError(`turn ${state.turnIndex} ${problem}: did the pipeline leave out ${code(stage)}${note}?${where}`, stage)
  if (!state.started) return missing('ended without starting: no stage started it', 'startTurn')
  if (state.assistant === undefined) return missing('ended without a model answer: no stage called the model', 'streamLlm')
  if (hasUnansweredCalls(state)) return missing("ended with the model's tool calls unanswered", 'dispatchTools')
  if (state.continuation === undefined) {
    return missing(
      'ended without deciding whether the loop goes on: no stage set `continuation`',
      'decideContinuation',
      ' (it was part of `pollSteering` before)',
    )
  }
  if (state.continuation === 'idle' && state.pending.length > 0) {
    return new TurnProtocolError(
      `turn ${state.turnIndex} decided to end the loop with messages pending: they were added after ${code('decideContinuation')} ` +
        `(${code('pollSteering')} must come before ${code('decideContinuation')})${where}`,
      'decideContinuation',
    )
  }
  return undefined
}

/** A turn's state did not come out of the pipeline and no stage holds it. */
export function droppedState(turnIndex: number, ledger: TurnLedger): TurnProtocolError {
  const after = ledger.lastStage === undefined ? 'before any stage passed it on' : `after ${code(ledger.lastStage)} passed it on`
  return new TurnProtocolError(
    `turn ${turnIndex} emitted no state: the state was dropped ${after} (a \`filter\`, a \`toArray\`?). ` +
      'Each stage must answer every state with exactly one state; a stage that holds it asynchronously must be built with `onTurnState`.',
    ledger.lastStage,
  )
}

/** A turn emitted a second state. */
export function secondState(turnIndex: number, inFlight: number | undefined, ledger: TurnLedger): TurnProtocolError {
  const when = inFlight === undefined ? '' : ` while turn ${inFlight} was running`
  const after = ledger.lastStage === undefined ? '' : ` (it came out after ${code(ledger.lastStage)}, the last stage that passed a state on)`
  return new TurnProtocolError(`turn ${turnIndex} emitted two states${when}; each turn must end with exactly one${after}`, ledger.lastStage)
}
