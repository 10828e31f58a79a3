/** Refusing tool calls by name or by rule, as a pre-dispatch policy. */
import { Verdict, type PreDispatchPolicy, type PreDispatchView } from '../policy.js'

/**
 * Whether a call is denied: `false` lets it run; `true` denies it with the
 * default reason; a string denies it with that reason (an empty one falls
 * back to the default).
 */
export type DenyRule = (toolName: string, args: Record<string, unknown>, view: PreDispatchView) => boolean | string

/**
 * Skips denied tool calls: each gets an error result that tells the model the
 * tool is denied (and why, when the rule says), and the run goes on. Other
 * calls of the same turn still run.
 *
 * @param deny - Tool names to deny (exact match), or a rule over the tool's
 * name and arguments (as they stand; a rewrite by any policy or by the
 * approver is checked again, so a rewrite cannot slip past the rule).
 * A rule that throws stops the run, as any failing policy does.
 *
 * @example
 * policies: { preDispatch: [toolDenyList(['deleteFile', 'sendEmail'])] }
 * policies: { preDispatch: [toolDenyList((name, args) => name === 'shell' && String(args.cmd).includes('rm -rf') && 'destructive commands are not allowed')] }
 */
export function toolDenyList(deny: readonly string[] | ReadonlySet<string> | DenyRule): PreDispatchPolicy {
  const rule: DenyRule = typeof deny === 'function' ? deny : byName(new Set(deny))
  return {
    name: 'toolDenyList',
    evaluate: (view) => {
      const name = view.toolCall.name
      const denied = rule(name, view.args, view)
      // Only an explicit `false` allows: a rule that forgets to answer fails closed.
      if (denied === false) return Verdict.continue
      return Verdict.skip(typeof denied === 'string' && denied !== '' ? denied : `the tool '${name}' is denied`)
    },
  }
}

function byName(names: ReadonlySet<string>): DenyRule {
  return (name) => names.has(name)
}
