/**
 * The public surface, pinned: what each entry point exports, values and types.
 * A change here is a change to the package's API — make it on purpose, here
 * and in the entry's index file. Internals (the linked observer, `nextState`,
 * the message queue, provider request/decoder helpers) stay out; tests import
 * them from their source files.
 */
import { describe, expect, it } from 'vitest'
import { resolve } from 'node:path'
import ts from 'typescript'
import { lastValueFrom, pipe, toArray } from 'rxjs'
import { agentLoop, defaultTurn, userMessage, withMessages, type TurnStages, type TurnState } from '../src/index.js'
import { onTurnState } from '../operators/index.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { addTool, context, hello } from './helpers.js'

const entries = {
  rxagent: 'src/index.ts',
  'rxagent/operators': 'operators/index.ts',
  'rxagent/marbles': 'marbles/index.ts',
  'rxagent/providers': 'src/providers/index.ts',
  'rxagent/otel': 'src/otel/index.ts',
  'rxagent/ag-ui': 'src/ag-ui/index.ts',
  'rxagent/sessions': 'src/sessions/index.ts',
  'rxagent/devtools': 'src/devtools/index.ts',
  'rxagent/pglite': 'src/sessions/pglite-store.ts',
  'rxagent/postgres': 'src/sessions/postgres-store.ts',
  'rxagent/mcp': 'src/mcp/index.ts',
  'rxagent/dbos': 'src/dbos/index.ts',
} as const
type Entry = keyof typeof entries

const pinned: Record<Entry, { values: string[]; types: string[] }> = {
  'rxagent': {
    values: [
      'AGENT_LOG_FORMAT', 'Agent', 'AgentBusyError', 'AgentEndEvent', 'AgentEvent', 'AgentLogEntry', 'AgentMessage', 'AgentMessageInput',
      'AgentOwnEvent', 'AgentResult', 'AgentRunEvent', 'AgentStartEvent', 'Approval', 'AssistantContent',
      'AssistantMessage', 'CHECKPOINT_FORMAT', 'Checkpoint', 'ChunkStopReason', 'CompactionEvent', 'Content',
      'Cost', 'CostRates', 'CostTier', 'CustomMessage', 'DEFAULT_PLAN_MODE_ADDENDUM', 'DecodeError', 'EventStamp',
      'ExtensionChunk', 'ExtensionContent', 'ImageContent', 'ImageSource', 'InMemoryCheckpointStore',
      'InvalidInputError', 'InvalidTranscriptError', 'JsonObject', 'ListenerErrorEvent', 'LlmMessage', 'LlmRequest',
      'MessageEndEvent', 'MessageStartChunk', 'MessageStartEvent', 'MessageUpdateEvent', 'ModelChangeEvent',
      'ModelFallbackEvent', 'ModelSpec', 'NonNegativeInteger', 'NonNegativeNumber', 'PolicyDecisionEvent',
      'PolicySlot', 'ProviderChunk', 'ProviderError', 'ProviderErrorInfo', 'ProviderErrorKind', 'RetryChunk',
      'StopChunk', 'StopReason', 'StreamMarks', 'StreamOptions', 'StreamRetryEvent', 'StructuredOutputError', 'TextContent',
      'TextDeltaChunk', 'ThinkingBudgets', 'ThinkingContent', 'ThinkingDeltaChunk', 'ThinkingLevel',
      'ThinkingRedactedChunk', 'ThinkingSignatureChunk', 'ToolApprovalEndEvent', 'ToolApprovalRequestEvent',
      'ToolCallContent', 'ToolExecutionEndEvent', 'ToolExecutionStartEvent', 'ToolExecutionUpdateEvent',
      'ToolMetrics', 'ToolOutput', 'ToolResultMessage', 'ToolSchema', 'ToolUseArgsDeltaChunk', 'ToolUseEndChunk',
      'ToolUseStartChunk', 'TurnEndEvent', 'TurnMetrics', 'TurnMetricsEvent', 'TurnProtocolError', 'TurnStartEvent',
      'Usage', 'UsageChunk', 'UserContent', 'UserMessage', 'Verdict', 'addCost', 'addUsage', 'agentLoop',
      'agentLoopContinue', 'agentLoopResume', 'agentMessageCodec', 'agentResult', 'assistantMessage', 'budgetPolicy', 'cacheHitRate',
      'compactionOf', 'composeTurn', 'costOf', 'decode', 'decodeAgentLog', 'decodeCheckpoint', 'decodeOrThrow', 'defaultTurn',
      'defineCustomMessage', 'defineTool', 'describeRepair', 'emptyCost', 'emptyUsage', 'estimateContextTokens',
      'estimateTokens', 'extractText', 'fromAsyncIterable', 'imageBase64', 'imageUrl', 'isLlmMessage', 'isTransientKind', 'isTurnState',
      'loopDetection', 'maxTurnsPolicy', 'mergeCost', 'mergeUsage', 'modelSpec', 'providerErrorInfo', 'ratesFor',
      'repairTranscript', 'runTool', 'settleTranscript', 'slidingWindow', 'slidingWindowRecovery', 'subAgentTool',
      'text', 'thinkingBudget', 'toJsonSchema', 'toolCallsOf', 'toolDenyList', 'toolResult', 'toolSchemaOf',
      'transcriptFromEvents', 'turnMetrics', 'usage', 'userMessage', 'withDescription', 'withMessages',
      // Durable sessions: Agent.open, its session, the SessionStore port.
      'AgentSession', 'DEFAULT_LEASE_TTL_MS', 'SessionClosedError', 'SessionConflictError', 'SessionDeletedError', 'SessionLeaseError', 'SessionRecord',
      'SessionRecordBody', 'SessionWriteError', 'StreamRecord', 'TimedRecord',
    ],
    types: [
      'AgentContext', 'AgentLoopConfig', 'AgentOptions', 'AgentRun', 'AgentState', 'AgentTool', 'ApprovalDecision',
      'ApprovalMode', 'ApprovalRequest', 'ApproveTool', 'AssistantStreamEvent', 'BudgetLimits', 'CallOptions',
      'CheckpointInfo', 'CheckpointStore', 'CompactionReport', 'CustomMessageKind', 'CustomMessageOf',
      'DecodeIssue', 'DenyRule', 'EstimateTokens',
      'JsonSchemaParameters', 'JsonSchemaToolDefinition',
      'LoopDetectionOptions', 'LoopStop', 'MessageSource',
      'MetricsCollector', 'PendingApproval', 'Policies', 'Policy', 'PolicyVerdict', 'PostLoopPolicy', 'PostLoopView', 'PostTurnPolicy',
      'PostTurnView', 'PreDispatchPolicy', 'PreDispatchVerdict', 'PreDispatchView', 'PreTurnPolicy', 'PreTurnView',
      'PromptInput', 'QueueMode', 'RegisteredKind', 'RepairedTranscript', 'RestoreOptions', 'ResumeOptions', 'RunToolOptions', 'RunView',
      'SlidingWindow', 'SlidingWindowOptions',
      'StandardJSONSchemaV1', 'StandardSchemaV1', 'StandardToolDefinition', 'StandardToolSchema',
      'StreamFn', 'StructuredOptions', 'StructuredRun',
      'SubAgentChild', 'SubAgentFollower', 'SubAgentToolOptions', 'SyncDecodingTool', 'ToolDecodeResult', 'ToolDefinition', 'ToolExecuteContext', 'ToolReturn', 'ToolRunEvent',
      'TranscriptRepair', 'TurnItem', 'TurnOperator', 'TurnStages', 'TurnState', 'WindowInfo', 'WindowResult',
      // Durable sessions.
      'AgentOpenOptions', 'LeaseOutcome', 'SessionAppend', 'SessionAppended', 'SessionInfo', 'SessionLease', 'SessionLeaseOptions',
      'SessionListOptions', 'SessionStore',
    ],
  },
  'rxagent/operators': {
    values: [
      'abortedState', 'accumulateMessage', 'callModel', 'decideContinuation', 'defaultConvertToLlm',
      'dispatchTools', 'endTurn', 'mapMessages', 'onTurnState', 'pollFollowUp', 'pollSteering', 'postLoopPolicy',
      'postTurnPolicy', 'preTurnPolicy', 'retryStream', 'startTurn', 'streamLlm', 'transformContext',
      'untilAborted',
    ],
    types: [
      'AbortOption', 'AccumulateMessageOptions', 'CallModelOptions', 'ConvertToLlm', 'DispatchToolsOptions',
      'ModelRoute', 'OnTurnStateOptions', 'OverflowRecovery', 'RetryOptions', 'StreamLlmOptions', 'ToolExecution',
      'TransformContext', 'TransformContextOptions',
    ],
  },
  'rxagent/marbles': {
    values: [
      'agentTestScheduler', 'chunk', 'eventLabel', 'foldChunks', 'reply', 'runAgentMarbles', 'scriptedModel',
      'splitBytes', 'splitText', 'timelineOf', 'toolCallChunks',
    ],
    types: [
      'AgentMarbleHelpers', 'ReplyOptions', 'ScriptedCall', 'ScriptedModel', 'ScriptedModelOptions',
      'ScriptedResponse',
    ],
  },
  'rxagent/providers': {
    values: [
      'CatalogModel', 'ModelApi', 'ModelCatalog', 'anthropic', 'catalogModel', 'compatFor', 'decodeWire', 'google',
      'model', 'models', 'openaiChat', 'openaiCompatible', 'openaiResponses', 'prepareMessages', 'providers',
      'streamFnOf',
    ],
    types: [
      'AnthropicSettings', 'AnthropicThinkingMode', 'Compat', 'CompatServer', 'GoogleRequestSettings',
      'GoogleSafetySetting', 'GoogleSchemaMode', 'GoogleSettings', 'GoogleThinkingParameter', 'HttpErrorClassifier',
      'HttpRequest', 'OpenAIChatRequestSettings', 'OpenAIChatSettings', 'OpenAICompatibleSettings',
      'OpenAICustomTool', 'OpenAIReasoningSummary', 'OpenAIResponsesRequestSettings', 'OpenAIResponsesSettings',
      'ProviderSettings', 'ReasoningEffort', 'ReplayTarget', 'RouteSettings', 'SseEvent', 'TransportOptions',
      'WireDecoder', 'WireProtocol',
    ],
  },
  'rxagent/devtools': {
    values: ['DEFAULT_DEVTOOLS_PORT', 'DEFAULT_DEVTOOLS_STORE', 'MARK_LETTERS', 'devtoolsSessionUrl', 'messageGist', 'serveDevtools', 'sessionTimeline', 'timelineMarbles'],
    types: [
      'BarStatus', 'DevtoolsAgent', 'DevtoolsAgents', 'DevtoolsOptions', 'DevtoolsServer', 'LaneKind', 'MarkKind', 'MessageItem',
      'OpenedAgent', 'PendingApprovalView', 'RunTimeline', 'SessionTimeline', 'TimelineBar', 'TimelineLane', 'TimelineMark', 'TurnSummary',
    ],
  },
  'rxagent/otel': {
    values: ['ABORTED', 'ATTR', 'EVENT', 'INSTRUMENTATION_NAME', 'METRIC', 'OPERATION', 'TOKEN_TYPE', 'TOOL_ERROR', 'finishReason', 'otelForwarder', 'semconvMessage', 'traceRun'],
    types: ['OtelOptions', 'SemconvMessage'],
  },
  'rxagent/ag-ui': {
    values: [
      'AgUiMessage', 'AgUiTool', 'CLIENT_TOOLS_POLICY', 'PENDING_ON_CLIENT', 'RunAgentInputCodec', 'agUiHandler', 'agentRunner',
      'clientTools', 'clientToolsPolicy', 'decodeRunAgentInput', 'latestRun', 'loopRunner', 'runAgUi', 'sessionRunToAgUi', 'sseFrame', 'toAgUi',
    ],
    types: ['AgUiHandlerOptions', 'AgUiRun', 'AgUiRunFactory', 'AgUiRunInput', 'PositionedAgUiEvent', 'RunAgUiOptions', 'RunAgentInputData', 'RunEvents', 'RunProgress', 'ToAgUiOptions'],
  },
  'rxagent/sessions': {
    values: [
      'SessionConflictError', 'SessionDeletedError', 'SessionLeaseError', 'SessionRecord', 'SessionRecordBody', 'SessionStoreClosedError',
      'StreamRecord', 'TimedRecord', 'deleteSessions', 'memorySessionStore',
      'serveSessions', 'sessionEventsHandler', 'sessionIdFromPath',
    ],
    types: [
      'DeleteSessionsOptions', 'LeaseOutcome', 'MemorySessionStore', 'MemorySessionStoreOptions', 'SessionAppend',
      'SessionAppended', 'SessionInfo', 'SessionLease', 'SessionListOptions', 'SessionStore',
      'ServeSessionsOptions', 'SessionEventsHandler', 'SessionEventsOptions', 'SessionServer', 'SessionStreamEnd', 'SessionStreamEndInfo',
    ],
  },
  'rxagent/pglite': {
    values: ['DataDirLockedError', 'LOCK_FILE', 'SCHEMA_VERSION', 'SessionSchemaError', 'pgliteSessionStore'],
    types: ['PgliteSessionStoreOptions', 'SqlLocation', 'SqlSessionStore'],
  },
  'rxagent/postgres': {
    values: ['SCHEMA_VERSION', 'SessionSchemaError', 'postgresSessionStore'],
    types: ['PostgresSessionStoreOptions', 'SqlLocation', 'SqlSessionStore'],
  },
  'rxagent/mcp': {
    values: [
      'McpClientOptions', 'McpHttpServer', 'McpServerConfig', 'McpStdioServer', 'connectMcp', 'mcpTools', 'serveMcp',
      'syncMcpTools', 'toolNameFor',
    ],
    types: ['McpConnection', 'McpServeTransport', 'McpServing', 'McpToolDetails', 'ServableAgent', 'ServeMcpOptions', 'ServedAgent', 'ToolsTarget'],
  },
  'rxagent/dbos': {
    values: ['DEFAULT_APP', 'OutcomeTimeout', 'RUN_QUEUE', 'RUN_WORKFLOW', 'ReplayDivergenceError', 'dbosAgentClient', 'startWorker'],
    types: ['DbosAgentClient', 'DbosAgentClientOptions', 'DbosAgentDefinition', 'DbosRunOutcome', 'DbosWorker', 'PgConnection', 'StartWorkerOptions', 'SubmittedInput'],
  },
}

/** Each entry's exports as the type checker sees them: values (codecs count as values) and type-only names. */
function surfaceOf(): Record<Entry, { values: string[]; types: string[] }> {
  const files = Object.values(entries).map((file) => resolve(file))
  const config = ts.getParsedCommandLineOfConfigFile(resolve('tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (config === undefined) throw new Error('tsconfig.json did not parse')
  const program = ts.createProgram(files, { ...config.options, noEmit: true })
  const checker = program.getTypeChecker()
  const result = {} as Record<Entry, { values: string[]; types: string[] }>
  for (const [entry, file] of Object.entries(entries) as Array<[Entry, string]>) {
    const source = program.getSourceFile(resolve(file))
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    if (module === undefined) throw new Error(`no module for ${file}`)
    const values: string[] = []
    const types: string[] = []
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      ;(target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name)
    }
    result[entry] = { values: values.sort(), types: types.sort() }
  }
  return result
}

describe('the public surface', () => {
  const surface = surfaceOf()

  for (const entry of Object.keys(entries) as Entry[]) {
    it(`${entry} exports exactly the pinned names`, async () => {
      // Pinned lists are grouped by feature; compared sorted.
      const expected = { values: [...pinned[entry].values].sort(), types: [...pinned[entry].types].sort() }
      expect(surface[entry]).toEqual(expected)
      // And at run time: every pinned value, nothing else.
      const module = (await import(`../${entries[entry].replace(/\.ts$/, '.js')}`)) as Record<string, unknown>
      expect(Object.keys(module).sort()).toEqual(expected.values)
    })
  }

  it('keeps internals out of every entry', () => {
    const all = Object.values(surface).flatMap(({ values, types }) => [...values, ...types])
    for (const internal of ['linked', 'LinkedObserver', 'nextState', 'MessageQueue', 'anthropicRequestBody', 'excerpt', 'httpError', 'SseDecoder']) {
      expect(all).not.toContain(internal)
    }
  })
})

describe('a custom stage built from the public entries only', () => {
  it('builds new states without nextState: withMessages appends, a spread sets a field', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), reply.text('5')])
    const note = userMessage('(a note from a custom stage)', 0)
    // Runs before each turn: the first gets a note in its transcript, the second is stopped before it starts.
    const stage = onTurnState((state: TurnState) =>
      state.turnIndex === 0 ? withMessages(state, [note]) : { ...state, stop: { reason: 'policyStop', message: 'enough', by: 'custom' } },
    )
    const config = { model: model.model, streamFn: model.streamFn, turn: (s: TurnStages) => pipe(stage, defaultTurn(s)) }
    const events = await lastValueFrom(agentLoop(hello, context([addTool]), config).pipe(toArray()))
    const end = events.at(-1)
    expect(end?.type === 'agentEnd' && end.result.stopReason).toBe('policyStop')
    expect(model.requests.map((request) => request.messages.map((m) => m.role))).toEqual([['user', 'user']])
    expect(model.requests[0]?.messages[0]).toEqual(note)
  })
})
