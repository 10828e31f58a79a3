/**
 * An AG-UI run from a `RunAgentInput`: decode the input, start an rxagent run
 * (an `agentLoop` or an `Agent`) from it, map its events onto AG-UI's.
 *
 * One rxjs or two: `@ag-ui/client` pins an exact rxjs version, so an app may
 * hold two copies. Nothing here tests `instanceof Observable`: a run
 * factory's result is adopted with `from()` (through `Symbol.observable`),
 * and what `runAgUi` returns is itself an interop Observable any copy's
 * `from()` accepts (an `AbstractAgent.run` may return it as it is).
 */
import { defer, from, Observable, type ObservableInput, type InteropObservable, type Subscribable } from 'rxjs'
import type { AGUIEvent } from '@ag-ui/core'
import { Agent } from '../agent/agent.js'
import type { AgentOptions } from '../agent/agent-options.js'
import { agentLoopContinue, type AgentLoopConfig } from '../loop/agent-loop.js'
import type { Policies } from '../policy/policy.js'
import type { AgentEvent } from '../types/event.js'
import type { AgentTool } from '../types/tool.js'
import { clientTools, clientToolsPolicy } from './client-tools.js'
import { decodeRunAgentInput, type AgUiRunInput } from './input.js'
import { toAgUi } from './to-ag-ui.js'

/** What a run factory is given: the decoded input, and what wires the client's tools in. */
export interface AgUiRun extends AgUiRunInput {
  /** The client's tools as rxagent tools: add them to the run's tools. */
  readonly tools: readonly AgentTool[]
  /** A post-turn policy that ends the run after a turn that called a client tool: add it to the run's policies. */
  readonly policies: Required<Pick<Policies, 'postTurn'>>
}

/** Any Observable of a run's events, from any rxjs copy (or any `Symbol.observable` source). */
export type RunEvents = Observable<AgentEvent | { readonly type: string }> | InteropObservable<AgentEvent | { readonly type: string }> | Subscribable<AgentEvent | { readonly type: string }>

/** Starts an rxagent run for an AG-UI request. Unsubscribing must stop the run (an `agentLoop` does; {@link agentRunner} aborts its Agent). */
export type AgUiRunFactory = (run: AgUiRun) => RunEvents

/** Joins system texts, skipping empty ones. */
const joinSystem = (...parts: readonly string[]): string => parts.filter((p) => p !== '').join('\n\n')

/** Merges the client-tools policy into `policies`. */
function withClientPolicy(policies: Policies | undefined, run: AgUiRun): Policies {
  return { ...policies, postTurn: [...(policies?.postTurn ?? []), ...run.policies.postTurn] }
}

/**
 * A run factory over `agentLoopContinue`: the client's transcript continued
 * with `config`, your `tools` plus the client's, your `systemPrompt` followed
 * by the client's system messages and context.
 */
export function loopRunner(options: AgentLoopConfig & { readonly systemPrompt?: string; readonly tools?: readonly AgentTool[] }): AgUiRunFactory {
  const { systemPrompt = '', tools = [], ...config } = options
  return (run) =>
    agentLoopContinue(
      { systemPrompt: joinSystem(systemPrompt, run.system), messages: run.messages, tools: [...tools, ...run.tools] },
      { ...config, policies: withClientPolicy(config.policies, run) },
    )
}

/**
 * A run factory over an `Agent` made per request (AG-UI clients send the
 * whole transcript each time): `options` with the client's messages, tools
 * and system text added; the run is `agent.continue()`, aborted when the
 * client goes away. `options` may be a function of the run (per-thread ids,
 * forwarders such as `otelForwarder`).
 */
export function agentRunner(options: AgentOptions | ((run: AgUiRun) => AgentOptions)): AgUiRunFactory {
  return (run) =>
    defer(() => {
      const base = typeof options === 'function' ? options(run) : options
      const agent = new Agent({
        ...base,
        systemPrompt: joinSystem(base.systemPrompt, run.system),
        messages: [...(base.messages ?? []), ...run.messages],
        tools: [...(base.tools ?? []), ...run.tools],
        policies: withClientPolicy(base.policies, run),
      })
      const events$ = agent.continue().events$
      return new Observable<AgentEvent | { readonly type: string }>((subscriber) => {
        const subscription = events$.subscribe(subscriber)
        return () => {
          subscription.unsubscribe()
          if (agent.isRunning) void agent.abort()
        }
      })
    })
}

/** Options of {@link runAgUi}. */
export interface RunAgUiOptions {
  /** Milliseconds since the epoch, for message timestamps and event `timestamp`s (default `Date.now`). */
  readonly now?: () => number
}

/**
 * One AG-UI run: decodes `input` (a `RunAgentInput`; an `InvalidInputError`
 * naming the path when it is wrong), starts `factory`'s run with it and maps
 * the events with {@link toAgUi}. Cold: nothing starts before subscription;
 * unsubscribing stops the run.
 *
 * @example
 * class LocalAgent extends AbstractAgent {
 *   run(input: RunAgentInput) { return runAgUi(input, loopRunner({ model, streamFn, tools })) }
 * }
 */
export function runAgUi(input: unknown, factory: AgUiRunFactory, options: RunAgUiOptions = {}): Observable<AGUIEvent> {
  const now = options.now ?? Date.now
  const decoded = decodeRunAgentInput(input, 'runAgUi', now())
  return runDecoded(decoded, factory, now)
}

/** {@link runAgUi} for an input already decoded. */
export function runDecoded(decoded: AgUiRunInput, factory: AgUiRunFactory, now: () => number = Date.now): Observable<AGUIEvent> {
  const names = new Set(decoded.clientTools.map((t) => t.name))
  const run: AgUiRun = { ...decoded, tools: clientTools(decoded.clientTools), policies: { postTurn: [clientToolsPolicy(names)] } }
  return defer(() => from(factory(run) as ObservableInput<AgentEvent | { readonly type: string }>)).pipe(
    toAgUi({ threadId: decoded.threadId, runId: decoded.runId, clientTools: names, state: decoded.state, now }),
  )
}
