/**
 * Reading records from a SQL store, in pages.
 *
 * A page of records is a few texts aggregated by the database from the
 * stored ones (a `json` body is kept as it was written) and parsed once,
 * rather than a result row and a JSON parse per record (several times faster
 * on PGlite, fewer bytes over the wire on PostgreSQL). `read` gets the
 * positions, times and bodies as three texts (see `ReadRow`); a live tail's
 * page is one JSON text, `[[position, at, body], …]`, whose `at` goes through
 * `to_json`, so a non-finite time stays parseable (a string). Either way a
 * non-finite time is reported by `decodeStored` like any bad record.
 *
 * A live tail's page also says which session it read — its creation time
 * and last position, in the same statement (one snapshot) — so that a tail
 * can tell its session was deleted, or deleted and created again.
 */
import type { SessionRecord } from '../../agent/session-store.js'
import { decodeStored } from '../validate.js'
import type { SqlNames, SqlResult } from './driver.js'

/** Runs a query (the store tracks it). */
export type Query = <R>(text: string, params: readonly unknown[]) => Promise<SqlResult<R>>

/** A page row holds the records of one run of this many positions (at most this many records: one text stays small). */
const PAGE_GROUP = 4096

const ITEM = `'[' || position || ',' || to_json(at)::text || ',' || body::text || ']'`

/**
 * A page of `read`: the positions, the times and the bodies of one run of records, each a text joined
 * with commas (`1,2,3`; `1.7e12,…`; `{…},{…}`): the bodies are parsed as one JSON array, the numbers
 * split. Three aggregates of the stored texts instead of one `[position, at, body]` text per record:
 * that text was built by five concatenations, each a copy of the body, and `to_json(at)` (PGlite, the
 * DURABLE bench's 10,016-entry session, CPU of the query alone, median of 21 calls interleaved in one
 * process: 17.4 -> 12.8 ms). A non-finite time reads as `Infinity` or `NaN`, which is passed on as that
 * text: `decodeStored` reports it like any bad record.
 */
interface ReadRow {
  readonly positions: string | null
  readonly ats: string | null
  readonly bodies: string | null
}

const COLUMNS = `string_agg(position::text, ',' ORDER BY position) AS positions, string_agg(at::text, ',' ORDER BY position) AS ats,
  string_agg(body::text, ',' ORDER BY position) AS bodies`

/** The records of `sessionId` after position `from`, at most `limit`, decoded (`entry` names the store's method in errors). */
export async function readPage(query: Query, n: SqlNames, entry: string, sessionId: string, from: number, limit: number | undefined): Promise<readonly SessionRecord[]> {
  const { rows } = limit === undefined ? await readAll(query, n, sessionId, from) : await readSome(query, n, sessionId, from, limit)
  const records: SessionRecord[] = []
  for (const row of rows) {
    if (row.positions === null || row.ats === null || row.bodies === null) continue
    const positions = row.positions.split(',')
    const ats = row.ats.split(',')
    const bodies = JSON.parse(`[${row.bodies}]`) as unknown[]
    for (let i = 0; i < bodies.length; i++) {
      const at = Number(ats[i])
      // A non-finite time is reported as stored (`"NaN"`), as a tail's page reports it.
      records.push(decodeStored(entry, sessionId, Number(positions[i]), Number.isFinite(at) ? at : ats[i], bodies[i]))
    }
  }
  return records
}

/**
 * Every record after `from`: one page per run of {@link PAGE_GROUP} positions up to the session's last
 * position, each aggregated over one range of the primary key's index, which hands the rows over in
 * position order: no sort. (Grouping by `position / PAGE_GROUP` sorted every row, bodies and all,
 * first. Same measure as {@link ReadRow}'s: 29.0 -> 21.3 ms.) A range the session has no records in
 * (compacted stream records leave gaps) is a row of NULLs.
 */
function readAll(query: Query, n: SqlNames, sessionId: string, from: number): Promise<SqlResult<ReadRow>> {
  return query(
    `SELECT p.* FROM ${n.sessions} s, generate_series($2::bigint, s.last_position - 1, ${PAGE_GROUP}) g,
       LATERAL (SELECT ${COLUMNS} FROM ${n.records} WHERE session_id = $1 AND position > g AND position <= g + ${PAGE_GROUP}) p
     WHERE s.session_id = $1 ORDER BY g`,
    [sessionId, from],
  )
}

/** At most `limit` records after `from`, in pages of {@link PAGE_GROUP} positions. */
function readSome(query: Query, n: SqlNames, sessionId: string, from: number, limit: number): Promise<SqlResult<ReadRow>> {
  return query(
    `SELECT ${COLUMNS}
     FROM (SELECT position, at, body FROM ${n.records} WHERE session_id = $1 AND position > $2 ORDER BY position LIMIT $3) r
     GROUP BY position / ${PAGE_GROUP} ORDER BY position / ${PAGE_GROUP}`,
    [sessionId, from, limit],
  )
}

/** A live tail's page: the records, and the session they were read from as it was then (absent: it does not exist). */
export interface TailPage {
  readonly records: readonly SessionRecord[]
  readonly session: { readonly createdAt: number; readonly lastPosition: number } | undefined
}

/** The records after `from` (at most `limit`, below a page group), with the session's creation time and last position, in one statement. */
export async function readTailPage(query: Query, n: SqlNames, entry: string, sessionId: string, from: number, limit: number): Promise<TailPage> {
  const { rows } = await query<{ created_at: number | null; last_position: number | null; page: string | null }>(
    `SELECT s.created_at, s.last_position::float8 AS last_position,
       (SELECT '[' || string_agg(${ITEM}, ',' ORDER BY position) || ']'
        FROM (SELECT position, at, body FROM ${n.records} WHERE session_id = $1 AND position > $2 ORDER BY position LIMIT $3) r) AS page
     FROM (SELECT 1) one LEFT JOIN ${n.sessions} s ON s.session_id = $1`,
    [sessionId, from, limit],
  )
  const row = rows[0]
  const records = row?.page == null ? [] : decodePage(entry, sessionId, row.page)
  const session = row?.created_at == null ? undefined : { createdAt: row.created_at, lastPosition: row.last_position ?? 0 }
  return { records, session }
}

function decodePage(entry: string, sessionId: string, page: string): SessionRecord[] {
  return (JSON.parse(page) as [number, unknown, unknown][]).map(([position, at, body]) => decodeStored(entry, sessionId, position, at, body))
}
