// UTF-8 chunks decoded through the one-shot decode (src/providers/utf8-chunks.ts): the same text as a
// streaming TextDecoder, for any bytes (valid or not, a byte order mark or not) cut anywhere.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Utf8Chunks, unfinishedTail } from '../../src/providers/utf8-chunks.js'
import { piecesAt } from '../arbitraries.js'

/** What a streaming TextDecoder gives for `bytes` cut at `cuts`. */
function streaming(chunks: readonly Uint8Array[]): string {
  const d = new TextDecoder()
  return chunks.map((c) => d.decode(c, { stream: true })).join('') + d.decode()
}

function chunked(chunks: readonly Uint8Array[]): string {
  const d = new Utf8Chunks()
  return chunks.map((c) => d.decode(c)).join('') + d.end()
}

/** `bytes` cut at the given positions (empty chunks included: see `piecesAt`). */
const cut = (bytes: Uint8Array, at: readonly number[]): Uint8Array[] => piecesAt(bytes.length, at, (from, to) => bytes.subarray(from, to))

const encoder = new TextEncoder()
/** Text of any code points (astral ones included), a byte order mark in front or not, as bytes, with some bytes replaced by junk. */
const arbBytes = fc.oneof(
  fc.tuple(fc.boolean(), fc.string({ unit: 'binary', maxLength: 40 })).map(([bom, s]) => encoder.encode(bom ? `\uFEFF${s}` : s)),
  fc.uint8Array({ maxLength: 40 }),
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom(0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x90, 0x8f)), { maxLength: 4 }))
    .map(([s, junk]) => {
      const bytes = encoder.encode(s)
      for (const [at, b] of junk) if (bytes.length > 0) bytes[at % bytes.length] = b
      return bytes
    }),
)

describe('Utf8Chunks', () => {
  it('gives the text a streaming TextDecoder gives, for any bytes cut anywhere', () => {
    fc.assert(
      fc.property(arbBytes, fc.array(fc.nat(), { maxLength: 6 }), (bytes, at) => {
        const chunks = cut(bytes, at)
        expect(chunked(chunks)).toBe(streaming(chunks))
        // Byte by byte too.
        const bytewise = [...bytes].map((b) => Uint8Array.of(b))
        expect(chunked(bytewise)).toBe(streaming(bytewise))
      }),
      { numRuns: 3000 },
    )
  })

  it('keeps only a valid start of a character for the next chunk', () => {
    expect(unfinishedTail(Uint8Array.of(0x61, 0xe2, 0x9c))).toBe(2)
    expect(unfinishedTail(Uint8Array.of(0xf0, 0x9f, 0x98))).toBe(3)
    expect(unfinishedTail(Uint8Array.of(0xe0, 0x80))).toBe(0)
    expect(unfinishedTail(Uint8Array.of(0xed, 0xa0))).toBe(0)
    expect(unfinishedTail(Uint8Array.of(0xc0))).toBe(0)
    expect(unfinishedTail(Uint8Array.of(0xe2, 0x9c, 0x93))).toBe(0)
    expect(chunked([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf, 0x61)])).toBe('a')
    expect(chunked([Uint8Array.of(0x61, 0xe2, 0x9c)])).toBe('a\uFFFD')
  })
})
