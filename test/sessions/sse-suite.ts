/**
 * The SSE helper over one store: run by sse-memory.test.ts, sse-pglite.test.ts
 * and sse-postgres.test.ts. Real HTTP on 127.0.0.1, real clients (fetch, the
 * `eventsource` package's reconnecting EventSource, a raw TCP socket for the
 * slow reader).
 */
import { connect } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventSource } from 'eventsource'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { VirtualAction, VirtualTimeScheduler } from 'rxjs'
import type { SessionRecord, SessionStore } from '../../src/agent/session-store.js'
import { serveSessions, type SessionServer } from '../../src/sessions/serve-sessions.js'
import { sessionEventsHandler, type SessionEventsOptions, type SessionStreamEndInfo } from '../../src/sessions/sse.js'
import { countingTails, openRaw, recordTypes, recordsOf, until, Writer, type MakeStore, type StoreUnderTest } from './sse-support.js'

export function sseSuite(name: string, makeStore: MakeStore): void {
  describe(`SSE readers over the ${name} store`, () => {
    let under: StoreUnderTest
    let counted: ReturnType<typeof countingTails>
    let store: SessionStore
    const servers: SessionServer[] = []
    const serve = async (options: SessionEventsOptions = {}): Promise<SessionServer> => {
      const server = await serveSessions(store, { heartbeatMs: 0, ...options })
      servers.push(server)
      return server
    }
    const eventsUrl = (server: SessionServer, id: string) => `${server.url}/sessions/${encodeURIComponent(id)}/events`

    beforeEach(async () => {
      under = await makeStore()
      counted = countingTails(under.store)
      store = counted.store
    })
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()))
      await under.cleanup()
    })

    it('replays a session as events whose id is the position and whose name is the record type, then tails it live', async () => {
      const writer = new Writer(store, 'a/b c')
      await writer.init()
      await writer.prompt('hello')
      const server = await serve({ retryMs: 250 })
      const raw = await openRaw(eventsUrl(server, 'a/b c'))
      expect(raw.status).toBe(200)
      expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(raw.headers.get('cache-control')).toBe('no-cache, no-transform')
      await until(() => raw.events.length === 3, 'the replay')
      expect(raw.retries).toEqual([250])
      // Each delta delivered before the next append: a tail fed by NOTIFY would otherwise find the stream records compacted.
      await writer.turn(0, 3, () => until(() => raw.events.at(-1)?.id === String(writer.lastPosition), 'a live delta'))
      await until(() => raw.events.length === 3 + 3 + 3, 'the live records')
      const records = recordsOf(raw.events)
      expect(raw.events.map((e) => e.id)).toEqual(records.map((r) => String(r.position)))
      expect(raw.events.map((e) => e.event)).toEqual(records.map((r) => r.body.type))
      expect(records.map((r) => r.body)).toEqual([...writer.bodies.values()])
      expect(records.map((r) => r.position)).toEqual([...writer.bodies.keys()])
      raw.close()
    })

    it('starts after ?from=, and after Last-Event-ID, which wins over ?from=', async () => {
      const writer = new Writer(store, 's')
      await writer.init()
      await writer.prompt('one')
      await writer.prompt('two')
      const positions = [...writer.bodies.keys()]
      const server = await serve()
      const fromQuery = await openRaw(`${eventsUrl(server, 's')}?from=${positions[2]}`)
      const fromHeader = await openRaw(`${eventsUrl(server, 's')}?from=${positions[0]}`, { 'Last-Event-ID': String(positions[3]) })
      await until(() => fromQuery.events.length === 2 && fromHeader.events.length === 1, 'the replays')
      expect(fromQuery.events.map((e) => Number(e.id))).toEqual(positions.slice(3))
      expect(fromHeader.events.map((e) => Number(e.id))).toEqual(positions.slice(4))
      fromQuery.close()
      fromHeader.close()
    })

    it('replays a page at a time, and can leave the event name out so that onmessage gets every record', async () => {
      const writer = new Writer(store, 'paged')
      await writer.init()
      for (let i = 0; i < 3; i++) await writer.prompt(`p${i}`)
      const server = await serve({ replayPageSize: 2, eventNames: 'message' })
      const got: SessionRecord[] = []
      const source = new EventSource(eventsUrl(server, 'paged'))
      source.onmessage = (e) => got.push(JSON.parse(e.data) as SessionRecord)
      try {
        await until(() => got.length === 7, 'the replay')
        await writer.prompt('live')
        await until(() => got.length === 9, 'the live records')
        expect(got.map((r) => r.position)).toEqual([...writer.bodies.keys()])
        expect(got.map((r) => r.body)).toEqual(writer.entries)
      } finally {
        source.close()
      }
    })

    it('answers 404 for an unknown session or URL, 400 for a bad or impossible position, 405 for another method', async () => {
      const writer = new Writer(store, 'known')
      await writer.init()
      const server = await serve({ headers: { 'access-control-allow-origin': '*' } })
      const unknown = await fetch(eventsUrl(server, 'nope'))
      expect([unknown.status, await unknown.text()]).toEqual([404, "session 'nope' not found\n"])
      expect(unknown.headers.get('access-control-allow-origin')).toBe('*')
      const elsewhere = await fetch(`${server.url}/other`)
      expect([elsewhere.status, await elsewhere.text()]).toEqual([404, 'not found: /other names no session (expected /sessions/<id>/events)\n'])
      const badId = await fetch(eventsUrl(server, 'known'), { headers: { 'Last-Event-ID': 'abc' } })
      expect([badId.status, await badId.text()]).toEqual([400, 'Last-Event-ID must be a record position (a whole number ≥ 0), got "abc"\n'])
      const badFrom = await fetch(`${eventsUrl(server, 'known')}?from=-1`)
      expect([badFrom.status, await badFrom.text()]).toEqual([400, '?from= must be a record position (a whole number ≥ 0), got "-1"\n'])
      const past = await fetch(eventsUrl(server, 'known'), { headers: { 'Last-Event-ID': String(writer.lastPosition + 1) } })
      expect(past.status).toBe(400)
      expect(await past.text()).toContain(`position ${writer.lastPosition + 1} is past the last record of session 'known' (${writer.lastPosition})`)
      const post = await fetch(eventsUrl(server, 'known'), { method: 'POST' })
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
      expect(counted.live()).toBe(0)
    })

    /** Session 's' with its init entry, served, and one raw reader following it; the ends the helper reported. */
    const tailOne = async () => {
      const writer = new Writer(store, 's')
      await writer.init()
      const ends: SessionStreamEndInfo[] = []
      const server = await serve({ onStreamEnd: (info) => ends.push(info) })
      const raw = await openRaw(eventsUrl(server, 's'))
      return { writer, ends, server, raw }
    }

    it('releases the store tail when the client disconnects', async () => {
      const { writer, ends, raw } = await tailOne()
      await until(() => raw.events.length === 1 && counted.live() === 1, 'the tail')
      raw.close()
      await until(() => counted.live() === 0, 'the tail released')
      await until(() => ends.length === 1, 'onStreamEnd')
      expect(ends[0]).toEqual({ sessionId: 's', reason: 'client', lastPosition: writer.lastPosition, records: 1 })
    })

    it('ends the responses when the store closes, and the tails complete', async () => {
      const { ends, raw } = await tailOne()
      await until(() => counted.live() === 1, 'the tail')
      await store.close()
      await raw.done
      expect(ends.map((e) => e.reason)).toEqual(['storeClosed'])
      expect(counted.live()).toBe(0)
    })

    it('ends the response when the session is deleted, saying so; the reconnection gets 404', async () => {
      const { writer, ends, server, raw } = await tailOne()
      await until(() => raw.events.length === 1 && counted.live() === 1, 'the tail')
      expect(await store.delete('s')).toBe(true)
      await raw.done
      expect(raw.comments).toEqual([`session 's' was deleted: its tail ends (a session created again under the id starts over at position 1)`])
      expect(ends).toMatchObject([{ sessionId: 's', reason: 'deleted', lastPosition: writer.lastPosition, records: 1, error: { name: 'SessionDeletedError', sessionId: 's' } }])
      expect(counted.live()).toBe(0)
      const again = await fetch(eventsUrl(server, 's'), { headers: { 'Last-Event-ID': String(writer.lastPosition) } })
      expect(again.status).toBe(404)
    })

    it('sends a heartbeat comment on the injected scheduler', async () => {
      const writer = new Writer(store, 's')
      await writer.init()
      const scheduler = new VirtualTimeScheduler(VirtualAction, 3 * 15_000)
      const server = await serve({ heartbeatMs: 15_000, scheduler })
      const raw = await openRaw(eventsUrl(server, 's'))
      await until(() => raw.events.length === 1 && counted.live() === 1, 'the tail')
      expect(raw.comments).toEqual([])
      scheduler.flush()
      await until(() => raw.comments.length === 3, 'three heartbeats')
      expect(raw.comments).toEqual(['keep-alive', 'keep-alive', 'keep-alive'])
      raw.close()
    })

    it('ends the response of a reader slower than the writer once its buffer is full, and the reader resumes from its last event', async () => {
      const writer = new Writer(store, 'slow')
      await writer.init()
      const ends: SessionStreamEndInfo[] = []
      const maxBufferedBytes = 64 * 1024
      const server = await serve({ maxBufferedBytes, onStreamEnd: (info) => ends.push(info) })
      // A reader that sends its request and then does not read.
      const { port } = new URL(server.url)
      const socket = connect(Number(port), '127.0.0.1')
      const received: Buffer[] = []
      socket.on('data', (bytes: Buffer) => received.push(bytes))
      await new Promise<void>((resolve) => socket.once('connect', resolve))
      socket.write(`GET /sessions/slow/events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
      await until(() => counted.live() === 1, 'the tail')
      socket.pause()
      // Records of 256 KB until the server gives up on the reader (the kernel's socket buffers take megabytes first).
      const big = 'x'.repeat(256 * 1024)
      await writer.entry({ type: 'turnStart', turnIndex: 0 })
      let appended = 0
      while (ends.length === 0) {
        await writer.stream(big)
        // A turn of the event loop, for the server to write (a real writer's appends are I/O).
        await new Promise((resolve) => setImmediate(resolve))
        if (++appended > 1_000) throw new Error('the server never ended the slow response')
      }
      expect(ends[0]!.reason).toBe('overflow')
      expect(counted.live()).toBe(0)
      // What the server wrote is whole events, up to the last one it counted.
      socket.resume()
      await new Promise<void>((resolve) => socket.once('end', resolve))
      socket.destroy()
      const body = Buffer.concat(received).toString('utf8')
      const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
      // Every record up to the last one it wrote, none missing (a live tail fed by NOTIFY may not have had the last appends yet).
      expect(ids.at(-1)).toBe(ends[0]!.lastPosition)
      expect(ids).toEqual([...writer.bodies.keys()].filter((p) => p <= ends[0]!.lastPosition))
      expect(ends[0]!.records).toBe(ids.length)
      // The reconnection carries on from there: the rest, no duplicate.
      await writer.entry({ type: 'messageEnd', message: { role: 'user', content: [{ type: 'text', text: 'end' }], timestamp: 0 } })
      const again = await openRaw(eventsUrl(server, 'slow'), { 'Last-Event-ID': String(ends[0]!.lastPosition) })
      await until(() => again.events.at(-1)?.id === String(writer.lastPosition), 'the rest')
      const rest = recordsOf(again.events)
      expect(rest[0]!.position).toBeGreaterThan(ends[0]!.lastPosition)
      expect(rest.at(-1)!.body.type).toBe('messageEnd')
      again.close()
    })

    it('a reconnecting EventSource whose connections are cut mid-stream sees every log entry once, in order, and the stream records in between', async () => {
      const writer = new Writer(store, 'cut')
      await writer.init()
      // A gate in front of the handler: while it is closed, reconnections wait (the writer compacts meanwhile).
      let gate: Promise<void> = Promise.resolve()
      const handler = sessionEventsHandler(store, { retryMs: 20, heartbeatMs: 0 })
      const server = await serve()
      server.server.removeAllListeners('request')
      server.server.on('request', (req: IncomingMessage, res: ServerResponse) => void gate.then(() => handler(req, res)))
      const sockets = new Set<import('node:net').Socket>()
      server.server.on('connection', (socket) => {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
      })
      const cut = () => {
        for (const socket of sockets) socket.destroy()
      }

      const got: SessionRecord[] = []
      let opens = 0
      const source = new EventSource(eventsUrl(server, 'cut'))
      source.addEventListener('open', () => opens++)
      for (const type of recordTypes) source.addEventListener(type, (e) => got.push(JSON.parse(e.data) as SessionRecord))
      try {
        await until(() => opens === 1 && got.length === 1, 'the first connection')
        let turn = 0
        for (let round = 0; round < 6; round++) {
          await writer.prompt(`prompt ${round}`)
          // Mid-stream: the first deltas are delivered live, then the connection is cut while the others are appended.
          let delta = 0
          await writer.turn(turn++, 8, async () => {
            if (delta < 3) await until(() => got.at(-1)?.position === writer.lastPosition, 'a live delta')
            else if (delta === 3) cut()
            else await new Promise((resolve) => setImmediate(resolve))
            delta++
          })
          // Away: the client is cut off while a message streams and ends (its stream records compacted before it is back).
          let open!: () => void
          gate = new Promise<void>((resolve) => (open = resolve))
          cut()
          await writer.entry({ type: 'turnStart', turnIndex: turn })
          for (let i = 0; i < 4; i++) await writer.stream(`away ${round}.${i} `)
          await writer.entry({ type: 'messageEnd', message: userMessageLike(`away ${round}`) })
          await writer.entry({ type: 'turnEnd', turnIndex: turn++ })
          open()
          await until(() => got.at(-1)?.position === writer.lastPosition, `round ${round} delivered`)
        }
        expect(opens).toBeGreaterThanOrEqual(7)
        checkDelivered(got, writer)
        // A reload: a new EventSource that starts after the last id it saw.
        const last = got.at(-1)!.position
        source.close()
        await writer.prompt('after the reload')
        const reloaded: SessionRecord[] = []
        const withHeader: SessionRecord[] = []
        const again = new EventSource(`${eventsUrl(server, 'cut')}?from=${last}`)
        const again2 = new EventSource(eventsUrl(server, 'cut'), {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'Last-Event-ID': String(last) } }),
        })
        try {
          for (const type of recordTypes) {
            again.addEventListener(type, (e) => reloaded.push(JSON.parse(e.data) as SessionRecord))
            again2.addEventListener(type, (e) => withHeader.push(JSON.parse(e.data) as SessionRecord))
          }
          await until(() => reloaded.length === 2 && withHeader.length === 2, 'the reloads')
          checkDelivered([...got, ...reloaded], writer)
          expect(withHeader).toEqual(reloaded)
        } finally {
          again.close()
          again2.close()
        }
      } finally {
        source.close()
      }
      await until(() => counted.live() === 0, 'every tail released')
    })
  })
}

function userMessageLike(text: string) {
  return { role: 'user' as const, content: [{ type: 'text' as const, text }], timestamp: 0 }
}

/** What a resuming reader must have seen: increasing positions, each record as written, every log entry exactly once. */
function checkDelivered(got: readonly SessionRecord[], writer: Writer): void {
  const positions = got.map((r) => r.position)
  positions.forEach((p, i) => {
    if (i > 0) expect(p, `position ${p} after ${positions[i - 1]}`).toBeGreaterThan(positions[i - 1]!)
  })
  for (const record of got) expect(record.body).toEqual(writer.bodies.get(record.position))
  expect(got.filter((r) => r.body.type !== 'stream').map((r) => r.body)).toEqual(writer.entries)
  // Some stream records were seen live, some were compacted before the client was back.
  const streamed = [...writer.bodies.values()].filter((b) => b.type === 'stream').length
  const seen = got.filter((r) => r.body.type === 'stream').length
  expect(seen).toBeGreaterThan(0)
  expect(seen).toBeLessThan(streamed)
}
