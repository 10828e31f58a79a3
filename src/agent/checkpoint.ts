/**
 * Checkpoints: everything needed to continue an agent exactly where it
 * stopped — transcript, model, system prompt, plan mode, and the steering and
 * follow-up messages still queued — as one io-ts value that round-trips
 * through JSON.
 *
 * The store interface is shaped for an append-only event log: a checkpoint is
 * immutable once saved (saving never overwrites; each save gets the next
 * sequence number of its agent), `list` reads in sequence order, and
 * `delete` is a tombstone a log-backed store can append. The in-memory store
 * here is the reference implementation; durable stores implement the same
 * four methods.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, describeValue, struct } from '../types/codec.js'
import { decodeInput, invalidInput, MessagesInput } from '../types/input.js'
import { AgentMessage } from '../types/message.js'
import { ModelSpec } from '../types/model.js'
import type { AgentState } from './agent-state.js'
import { resident } from '../rx/resident.js'

/**
 * The checkpoint format this rxagent writes. It reads this one and format 1
 * (before checkpoints were positions in the agent's log: no `position`); a
 * checkpoint without a `version` is read as format 1 (what was stored before
 * formats had numbers); a newer or unknown one is refused.
 */
export const CHECKPOINT_FORMAT = 2

const fields = (messages: t.Type<readonly AgentMessage[], unknown, unknown>) =>
  ({
    /** Unique across agents: `<agentId>:<seq>`. */
    id: t.string,
    agentId: t.string,
    /** This agent's checkpoint number, from 1, in save order. */
    seq: NonNegativeInteger,
    createdAt: NonNegativeInteger,
    systemPrompt: t.string,
    model: ModelSpec,
    /** The transcript as of the last completed turn. */
    messages,
    /** Queued, not yet delivered. */
    steering: messages,
    followUp: messages,
    planMode: t.boolean,
    /** Whether the agent was in the middle of a run: restoring then continues it. */
    midRun: t.boolean,
  }) as const

const optional = {
  /** The format (see {@link CHECKPOINT_FORMAT}); absent in checkpoints written before formats had numbers. */
  version: t.union([t.literal(1), t.literal(CHECKPOINT_FORMAT)]),
  /**
   * The position in the agent's log (`agent.log`, an entry's `seq`) the
   * checkpoint's transcript is the state of: the last completed turn. Since
   * format 2.
   */
  position: NonNegativeInteger,
  /** App data saved alongside (labels, the user id…). */
  metadata: t.record(t.string, t.unknown),
}

/** A checkpoint as stored: see the file's comment. */
export const Checkpoint = struct('Checkpoint', fields(t.readonlyArray(AgentMessage)), optional)
export type Checkpoint = t.TypeOf<typeof Checkpoint>

/**
 * Decodes a checkpoint from wherever it was kept: checks its format version
 * first, then every field (messages as the entries accept them, see
 * `decodePrompts`). The result always carries `version` (1 when absent).
 *
 * @throws InvalidInputError naming the path (`messages[3].content`), or
 * `version` for a newer or unknown format.
 */
export function decodeCheckpoint(u: unknown, entry: string, what = 'checkpoint', now = Date.now()): Checkpoint {
  const version = typeof u === 'object' && u !== null ? (u as { version?: unknown }).version : undefined
  if (version !== undefined && version !== 1 && version !== CHECKPOINT_FORMAT) {
    const newer = typeof version === 'number' && Number.isInteger(version) && version > CHECKPOINT_FORMAT
    throw invalidInput(
      entry,
      what,
      'version',
      newer
        ? `checkpoint format ${version} is newer than this rxagent understands (${CHECKPOINT_FORMAT})`
        : `unknown checkpoint format ${describeValue(version)} (this rxagent understands ${CHECKPOINT_FORMAT})`,
      version,
    )
  }
  const decoded = decodeInput(struct('Checkpoint', fields(MessagesInput(now)), optional), u, entry, what)
  return decoded.version === undefined ? { ...decoded, version: 1 } : decoded
}

/** What `list` returns: enough to choose a checkpoint without loading its transcript. */
export interface CheckpointInfo {
  readonly id: string
  readonly agentId: string
  readonly seq: number
  readonly createdAt: number
  readonly messageCount: number
}

/** Where checkpoints live. Every method may be asynchronous. */
export interface CheckpointStore {
  /** Appends `checkpoint` (its `id` must be new). */
  save(checkpoint: Checkpoint): Promise<void>
  /**
   * The checkpoint, decoded (use {@link decodeCheckpoint}): a stored value that
   * does not decode, or has a newer format, rejects with an `InvalidInputError`
   * naming the path.
   */
  load(id: string): Promise<Checkpoint | undefined>
  /** In save order; one agent's, or all. */
  list(agentId?: string): Promise<readonly CheckpointInfo[]>
  /** Whether it existed. */
  delete(id: string): Promise<boolean>
}

/** Checkpoints in memory, stored as JSON so that what comes back is what a durable store would return. */
export class InMemoryCheckpointStore implements CheckpointStore {
  private readonly log = new Map<string, string>()

  async save(checkpoint: Checkpoint): Promise<void> {
    if (this.log.has(checkpoint.id)) throw new Error(`checkpoint '${checkpoint.id}' already exists: checkpoints are immutable`)
    this.log.set(checkpoint.id, JSON.stringify(Checkpoint.encode(checkpoint)))
  }

  async load(id: string): Promise<Checkpoint | undefined> {
    const json = this.log.get(id)
    if (json === undefined) return undefined
    return decodeCheckpoint(JSON.parse(json), 'InMemoryCheckpointStore.load', `checkpoint '${id}'`)
  }

  async list(agentId?: string): Promise<readonly CheckpointInfo[]> {
    const out: CheckpointInfo[] = []
    for (const json of this.log.values()) {
      const c = JSON.parse(json) as Checkpoint
      if (agentId === undefined || c.agentId === agentId) out.push({ id: c.id, agentId: c.agentId, seq: c.seq, createdAt: c.createdAt, messageCount: c.messages.length })
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
  }

  async delete(id: string): Promise<boolean> {
    return this.log.delete(id)
  }
}

/**
 * Where a checkpoint taken now starts from: the log position of the last
 * completed turn (or of the run's start), the transcript there, and what the
 * run in progress has taken since (its prompts, the queued messages it
 * drained) — which a checkpoint keeps, since the turn they went into is
 * redone on `continue()`.
 */
export class RunBoundary {
  position = 0
  /** What holds the transcript there: read only when a checkpoint is taken (a long one is made into an array then, `lazy-transcript.ts`). */
  private holder: { readonly messages: readonly AgentMessage[] } = { messages: [] }
  prompts: readonly AgentMessage[] = []
  readonly drained = { steering: [] as AgentMessage[], followUp: [] as AgentMessage[] }

  /** The transcript at {@link position}. */
  get messages(): readonly AgentMessage[] {
    return this.holder.messages
  }

  /** A turn completed (or a run starts) at log `position` with the transcript `holder.messages` (a state snapshot). */
  mark(position: number, holder: { readonly messages: readonly AgentMessage[] }): void {
    this.position = position
    this.holder = holder
    this.prompts = []
    this.drained.steering.length = 0
    this.drained.followUp.length = 0
  }

  /**
   * Checkpoint `seq` of agent `agentId`: the state's transcript and queues
   * when idle (at the log's `last` position), the boundary's mid-run.
   */
  checkpoint(agentId: string, seq: number, now: number, running: boolean, state: AgentState, last: number, metadata?: Record<string, unknown>): Checkpoint {
    return {
      version: CHECKPOINT_FORMAT,
      id: `${agentId}:${seq}`,
      agentId,
      seq,
      createdAt: now,
      systemPrompt: state.systemPrompt,
      model: state.model,
      messages: running ? [...this.messages, ...this.prompts] : state.messages,
      steering: [...(running ? this.drained.steering : []), ...state.steeringQueue],
      followUp: [...(running ? this.drained.followUp : []), ...state.followUpQueue],
      planMode: state.planMode,
      midRun: running,
      position: running ? this.position : last,
      ...(metadata === undefined ? {} : { metadata }),
    }
  }
}

// Its hidden class outlives an Agent (see `resident`): each Agent has its own boundary, so none was
// alive between two Agents, and the first full GC after a process's warm-up runs threw `mark` away
// ("weak objects", agent-tools after 30 warm-up runs, 3 processes of 3, `--trace-deopt`).
resident(new RunBoundary())
