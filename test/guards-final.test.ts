/**
 * Guards are final: arguments rewritten by the approver or by a pre-dispatch
 * policy go through the pre-dispatch policies again, so a deny rule cannot be
 * bypassed by a rewrite; a rewrite loop ends with an error result; and
 * `toolExecutionStart` reports the arguments the tool runs with.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { isRight } from 'fp-ts/lib/Either.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { Approval, type ApproveTool } from '../src/policy/approval.js'
import { toolDenyList } from '../src/policy/builtin/tool-deny-list.js'
import { Verdict, type PreDispatchPolicy } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import { AgentEvent } from '../src/types/event.js'
import { collect, context, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

/** A tool that reads a path and logs what it ran with. */
function readTool(ran: unknown[]) {
  return defineTool({
    name: 'read',
    description: 'Reads a file.',
    parameters: t.type({ path: t.string }),
    execute: (args) => (ran.push(args), `read ${args.path}`),
  })
}

const denySecrets = toolDenyList((_name, args) => String(args.path).startsWith('/secret') && 'secrets are off limits')

function runWith(config: Partial<AgentLoopConfig>, args: Record<string, unknown> = { path: '/tmp/a' }) {
  const ran: unknown[] = []
  const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'read', args }]), reply.text('ok')])
  const events = collect(agentLoop(hello, context([readTool(ran)]), { model: model.model, streamFn: model.streamFn, ...config }))
  const results = toolResultsOf(events)
  return { events, ran, results, result: resultOf(events), text: results.map(textOf) }
}

describe('a rewrite goes through the pre-dispatch policies again', () => {
  it("the approver's rewrite to a denied path is denied, and the tool does not run", () => {
    const approveTool: ApproveTool = () => Approval.approveWith({ path: '/secret/key' })
    const { ran, results, text } = runWith({ approveTool, policies: { preDispatch: [denySecrets] } })
    expect(ran).toEqual([])
    expect(results[0]?.isError).toBe(true)
    expect(text[0]).toMatch(/secrets are off limits/)
  })

  it("a later policy's rewrite to a denied path is denied by an earlier deny rule", () => {
    const redirect: PreDispatchPolicy = { name: 'redirect', evaluate: ({ args }) => (args.path === '/tmp/a' ? Verdict.rewrite({ path: '/secret/key' }) : Verdict.continue) }
    const { ran, text, events } = runWith({ policies: { preDispatch: [denySecrets, redirect] } })
    expect(ran).toEqual([])
    expect(text[0]).toMatch(/secrets are off limits/)
    const decisions = events.flatMap((e) => (e.type === 'policyDecision' ? [`${e.policy}:${e.action}`] : []))
    expect(decisions).toEqual(['redirect:rewrite', 'toolDenyList:skip'])
  })

  it('a rewrite to identical arguments does not start another pass', () => {
    let evaluated = 0
    const same: PreDispatchPolicy = { name: 'same', evaluate: ({ args }) => (evaluated++, Verdict.rewrite({ ...args })) }
    const { ran, events } = runWith({ policies: { preDispatch: [same] } })
    expect(evaluated).toBe(1)
    expect(ran).toEqual([{ path: '/tmp/a' }])
    expect(events.filter((e) => e.type === 'policyDecision')).toEqual([])
  })

  it('an idempotent normalizing policy settles after one more pass; every policy saw the final arguments', () => {
    const seen: string[] = []
    const lower: PreDispatchPolicy = { name: 'lower', evaluate: ({ args }) => Verdict.rewrite({ path: String(args.path).toLowerCase() }) }
    const watch: PreDispatchPolicy = { name: 'watch', evaluate: ({ args }) => (seen.push(String(args.path)), Verdict.continue) }
    const { ran } = runWith({ policies: { preDispatch: [watch, lower] } }, { path: '/TMP/A' })
    expect(ran).toEqual([{ path: '/tmp/a' }])
    expect(seen).toEqual(['/TMP/A', '/tmp/a'])
  })

  it('a rewrite loop ends: after the last allowed rewrite the call is answered with an error, the tool does not run', () => {
    let n = 0
    const restless: PreDispatchPolicy = { name: 'restless', evaluate: () => Verdict.rewrite({ path: `/tmp/${n++}` }) }
    const { ran, text, result } = runWith({ policies: { preDispatch: [restless] } })
    expect(ran).toEqual([])
    expect(text[0]).toMatch(/rewritten \d+ times/)
    expect(text[0]).toMatch(/restless/)
    expect(result.stopReason).toBe('stop')
  })

  it("policies that change the approver's arguments again are followed by a second approval of what will run", () => {
    const asked: unknown[] = []
    const approveTool: ApproveTool = ({ args }) => (asked.push(args), asked.length === 1 ? Approval.approveWith({ path: '/TMP/B' }) : Approval.approve)
    const lower: PreDispatchPolicy = { name: 'lower', evaluate: ({ args }) => Verdict.rewrite({ path: String(args.path).toLowerCase() }) }
    const { ran } = runWith({ approveTool, policies: { preDispatch: [lower] } }, { path: '/TMP/A' })
    expect(asked).toEqual([{ path: '/tmp/a' }, { path: '/tmp/b' }])
    expect(ran).toEqual([{ path: '/tmp/b' }])
  })
})

describe('toolExecutionStart reports the arguments the tool runs with', () => {
  it("rewritten: `args` are those the tool ran with, `modelArgs` the model's", () => {
    const approveTool: ApproveTool = () => Approval.approveWith({ path: '/tmp/b' })
    const { events, ran } = runWith({ approveTool })
    const start = events.find((e) => e.type === 'toolExecutionStart')
    expect(start).toMatchObject({ args: { path: '/tmp/b' }, modelArgs: { path: '/tmp/a' } })
    expect(ran).toEqual([{ path: '/tmp/b' }])
    expect(isRight(AgentEvent.decode(start))).toBe(true)
  })

  it('not rewritten: `args` only', () => {
    const { events } = runWith({})
    const start = events.find((e) => e.type === 'toolExecutionStart')
    expect(start).toEqual({ type: 'toolExecutionStart', toolCallId: 'c1', toolName: 'read', args: { path: '/tmp/a' } })
  })
})

describe('sameJson (how rewrites are compared)', () => {
  it('compares structurally, keys in any order, and does not recurse (100,000 levels deep)', async () => {
    const { sameJson } = await import('../src/tools/same-json.js')
    expect(sameJson({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] })).toBe(true)
    expect(sameJson({ a: [1, 2] }, { a: [1, 2, 3] })).toBe(false)
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false)
    expect(sameJson({ d: new Date(0) }, { d: new Date(0) })).toBe(false)
    const deep = (n: number, leaf: unknown): unknown => {
      let v: unknown = leaf
      for (let i = 0; i < n; i++) v = [v]
      return v
    }
    expect(sameJson(deep(100_000, 1), deep(100_000, 1))).toBe(true)
    expect(sameJson(deep(100_000, 1), deep(100_000, 2))).toBe(false)
  })
})

describe('approvalRequired', () => {
  it('is asked once per call, however many passes a rewrite makes', () => {
    const asked: string[] = []
    const rewriteOnce: PreDispatchPolicy = {
      name: 'normalize',
      evaluate: ({ args }) => (args.path === '/tmp/a' ? Verdict.rewrite({ path: '/tmp/b' }) : Verdict.continue),
    }
    const { ran } = runWith({
      approveTool: () => Approval.approveWith({ path: '/tmp/c' }),
      approvalRequired: (tool) => (asked.push(tool.name), true),
      policies: { preDispatch: [rewriteOnce] },
    })
    expect(ran).toEqual([{ path: '/tmp/c' }])
    expect(asked).toEqual(['read'])
  })
})

describe('an approver that only some calls need', () => {
  it('is asked about those, after the calls before them are planned, and approvalRequired once per call', () => {
    const asked: string[] = []
    const ran: unknown[] = []
    const write = defineTool({
      name: 'write',
      description: 'Writes a file.',
      parameters: t.type({ path: t.string }),
      execute: (args) => (ran.push({ write: args.path }), `wrote ${args.path}`),
    })
    const model = scriptedModel([
      reply.toolCalls([
        { id: 'c1', name: 'read', args: { path: '/a' } },
        { id: 'c2', name: 'write', args: { path: '/b' } },
        { id: 'c3', name: 'read', args: { path: '/c' } },
      ]),
      reply.text('ok'),
    ])
    const events = collect(
      agentLoop(hello, context([readTool(ran), write]), {
        model: model.model,
        streamFn: model.streamFn,
        approveTool: () => Approval.approve,
        approvalRequired: (tool) => (asked.push(tool.name), tool.name === 'write'),
      }),
    )
    expect(asked).toEqual(['read', 'write', 'read'])
    const tools = events.flatMap((e) =>
      e.type === 'toolApprovalRequest' || e.type === 'toolApprovalEnd' || e.type === 'toolExecutionStart' || e.type === 'toolExecutionEnd' ? [`${e.type}:${e.toolCallId}`] : [],
    )
    expect(tools).toEqual([
      'toolApprovalRequest:c2',
      'toolApprovalEnd:c2',
      'toolExecutionStart:c1',
      'toolExecutionEnd:c1',
      'toolExecutionStart:c2',
      'toolExecutionEnd:c2',
      'toolExecutionStart:c3',
      'toolExecutionEnd:c3',
    ])
    expect(ran).toEqual([{ path: '/a' }, { write: '/b' }, { path: '/c' }])
    expect(toolResultsOf(events).map(textOf)).toEqual(['read /a', 'wrote /b', 'read /c'])
  })
})
