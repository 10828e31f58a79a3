/**
 * The arguments every session store checks, checked once here: session ids,
 * holders, positions, limits, and an append's records — decoded with the
 * port's codecs and then checked for their place (contiguous `seq`s from
 * `expectedSeq`, stream records at the log's length, `init` first and only
 * first). Anything wrong is an `InvalidInputError` naming the store's method
 * and the path (`append.records[2].body.seq`).
 *
 * Also the plan of an append, the same for every store: which records are
 * kept (stream records before the batch's last message end are compacted
 * before they are ever stored) and whether the session's stored stream
 * records are deleted.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, describeValue, struct } from '../types/codec.js'
import { compileIs } from '../types/fast-is.js'
import { markDecoded } from '../agent/decoded-records.js'
import { decodeInput, invalidInput } from '../types/input.js'
import { deepFreeze } from '../types/deep-freeze.js'
import { SessionRecordBody, TimedRecord, type SessionRecord } from '../agent/session-store.js'

/** Session ids and lease holders are at most this long. */
export const MAX_ID_LENGTH = 256

/** Log entries whose append compacts the session's stream records before them. */
const COMPACTING: ReadonlySet<string> = new Set(['messageEnd', 'agentEnd', 'runFailed', 'reset'])

/** Whether appending `body` deletes the stream records before it. */
export const compacts = (body: SessionRecordBody): boolean => body.type !== 'stream' && COMPACTING.has(body.type)

/** A non-empty string of at most {@link MAX_ID_LENGTH} characters (a session id, a holder, a prefix). */
export function checkId(entry: string, what: string, u: unknown): string {
  if (typeof u !== 'string' || u.length === 0 || u.length > MAX_ID_LENGTH) {
    throw invalidInput(entry, what, what, `expected a non-empty string of at most ${MAX_ID_LENGTH} characters, got ${describeValue(u)}`, u)
  }
  return u
}

/** A positive integer (a limit, a ttl). */
function checkPositive(entry: string, what: string, path: string, u: unknown, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof u !== 'number' || !Number.isInteger(u) || u < 1 || u > max) throw invalidInput(entry, what, path, `expected an integer from 1 to ${max}, got ${describeValue(u)}`, u)
  return u
}

/** A lease's ttl: from 1 ms to a day. */
export const checkTtl = (entry: string, u: unknown): number => checkPositive(entry, 'ttlMs', 'ttlMs', u, 86_400_000)

const options = (entry: string, u: unknown): Record<string, unknown> => {
  if (u === undefined) return {}
  if (typeof u !== 'object' || u === null || Array.isArray(u)) throw invalidInput(entry, 'options', 'options', `expected an object, got ${describeValue(u)}`, u)
  return u as Record<string, unknown>
}

/** `read`'s options: `from` a position (default 0), at most `limit` records (default: all). */
export function checkReadOptions(entry: string, u: unknown): { from: number; limit: number | undefined } {
  const o = options(entry, u)
  const from = o['from'] ?? 0
  if (!NonNegativeInteger.is(from)) throw invalidInput(entry, 'options', 'options.from', `expected a non-negative integer position, got ${describeValue(from)}`, from)
  const limit = o['limit'] === undefined ? undefined : checkPositive(entry, 'options', 'options.limit', o['limit'])
  return { from, limit }
}

/** `list`'s options, with the default limit (100). */
export function checkListOptions(entry: string, u: unknown): { prefix: string | undefined; updatedBefore: number | undefined; limit: number } {
  const o = options(entry, u)
  const prefix = o['prefix']
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length > MAX_ID_LENGTH)) {
    throw invalidInput(entry, 'options', 'options.prefix', `expected a string of at most ${MAX_ID_LENGTH} characters, got ${describeValue(prefix)}`, prefix)
  }
  const before = o['updatedBefore']
  if (before !== undefined && (typeof before !== 'number' || !Number.isFinite(before))) {
    throw invalidInput(entry, 'options', 'options.updatedBefore', `expected a time in ms since the epoch, got ${describeValue(before)}`, before)
  }
  const limit = o['limit'] === undefined ? 100 : checkPositive(entry, 'options', 'options.limit', o['limit'])
  return { prefix, updatedBefore: before, limit }
}

const AppendCodec = struct(
  'SessionAppend',
  { expectedSeq: NonNegativeInteger, records: t.readonlyArray(TimedRecord) },
  { leaseHolder: t.string },
)

/** An append, checked and planned (see the module comment). */
export interface AppendPlan {
  readonly expectedSeq: number
  readonly leaseHolder: string | undefined
  /** The records to store, in order (stream records the batch itself compacts left out). */
  readonly records: readonly TimedRecord[]
  /** Whether the session's stored stream records are deleted (the batch holds a message or run end). */
  readonly compact: boolean
  /** The log's length after the append. */
  readonly length: number
  /** The `init` entry's agent id, when the append creates the session. */
  readonly agentId: string | undefined
}

/**
 * Decodes and plans an append.
 * @throws InvalidInputError naming the path (`append.records[1].body.seq`).
 */
export function planAppend(entry: string, u: unknown): AppendPlan {
  const append = decodeInput(AppendCodec, u, entry, 'append', 'append')
  if (append.leaseHolder !== undefined) checkId(entry, 'append.leaseHolder', append.leaseHolder)
  let length = append.expectedSeq
  let last = -1
  append.records.forEach((record, i) => {
    const path = `append.records[${i}]`
    if (!Number.isFinite(record.at)) throw invalidInput(entry, 'append', `${path}.at`, `expected a time in ms since the epoch, got ${describeValue(record.at)}`, record.at)
    const body = record.body
    if (length === 0 && body.type !== 'init') {
      throw invalidInput(entry, 'append', `${path}.body.type`, `a session starts with its 'init' entry, got ${describeValue(body.type)}`, body.type)
    }
    if (body.type === 'stream') {
      if (body.afterSeq !== length) throw invalidInput(entry, 'append', `${path}.body.afterSeq`, `expected ${length} (the log's length at this record), got ${body.afterSeq}`, body.afterSeq)
      return
    }
    if (body.seq !== length) throw invalidInput(entry, 'append', `${path}.body.seq`, `expected ${length} (entries are contiguous from expectedSeq ${append.expectedSeq}), got ${body.seq}`, body.seq)
    if (body.type === 'init' && length !== 0) throw invalidInput(entry, 'append', `${path}.body.type`, `'init' is only the first entry (seq 0), got it at seq ${length}`, body.type)
    if (compacts(body)) last = i
    length++
  })
  const records = last < 0 ? append.records : append.records.filter((r, i) => i >= last || r.body.type !== 'stream')
  const first = append.records[0]?.body
  return {
    expectedSeq: append.expectedSeq,
    leaseHolder: append.leaseHolder,
    records,
    compact: last >= 0,
    length,
    agentId: first?.type === 'init' ? first.agentId : undefined,
  }
}

const isBody = compileIs(SessionRecordBody)

/**
 * A stored record, decoded and frozen.
 * @throws InvalidInputError naming the session and position (`record 5 of session 's1' at body.message.role: …`).
 */
export function decodeStored(entry: string, sessionId: string, position: number, at: unknown, body: unknown): SessionRecord {
  const what = `record at position ${position} of session '${sessionId}' (stored; it no longer decodes)`
  if (typeof at !== 'number' || !Number.isFinite(at)) throw invalidInput(entry, what, 'at', `expected a time in ms since the epoch, got ${describeValue(at)}`, at)
  const decoded = isBody(body) ? (body as SessionRecordBody) : decodeInput(SessionRecordBody, body, entry, what, 'body')
  deepFreeze(decoded)
  return markDecoded(Object.freeze({ position, at, body: decoded }))
}
