/**
 * rxagent declares io-ts as a peer dependency, so a user's codecs may come from
 * another copy of io-ts than the one rxagent loads (npm installs a second copy
 * whenever versions do not dedupe). Codecs are recognized by their shape, not by
 * `instanceof`. The second copy here is `node_modules/io-ts` copied at test time
 * into a temporary directory: same code, another module instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as ours from 'io-ts'
import { isLeft, isRight } from 'fp-ts/lib/Either.js'
import { defineTool } from '../src/tools/define-tool.js'
import { toJsonSchema, withDescription } from '../src/tools/json-schema.js'
import { decode, taggedUnion } from '../src/types/codec.js'

type IoTs = typeof ours

let dir: string
let theirs: IoTs
/** A copy whose InterfaceType keeps its fields under another name, as a future io-ts might. */
let otherVersion: IoTs

/** Copies io-ts into `<dir>/<name>/node_modules/io-ts`, with fp-ts linked beside it, and imports it. */
async function copyIoTs(name: string, patch?: (source: string) => string): Promise<IoTs> {
  const modules = join(dir, name, 'node_modules')
  cpSync(resolve('node_modules/io-ts'), join(modules, 'io-ts'), { recursive: true })
  symlinkSync(resolve('node_modules/fp-ts'), join(modules, 'fp-ts'), 'dir')
  const entry = join(modules, 'io-ts', 'lib', 'index.js')
  if (patch !== undefined) writeFileSync(entry, patch(readFileSync(entry, 'utf8')))
  const imported = (await import(pathToFileURL(entry).href)) as IoTs & { default?: IoTs }
  return imported.default ?? imported
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rxagent-io-ts-'))
  theirs = await copyIoTs('copy')
  otherVersion = await copyIoTs('other-version', (source) => source.replace(/_this\.props = props;/, '_this.fields = props;'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('codecs from a second copy of io-ts', () => {
  it('really are another module instance', () => {
    expect(theirs.type).not.toBe(ours.type)
    expect(theirs.string instanceof ours.Type).toBe(false)
  })

  it('defineTool derives the schema and decodes the arguments of a tool whose parameters come from the other copy', () => {
    const t = theirs
    const tool = defineTool({
      name: 'search',
      description: 'Search',
      parameters: t.intersection([
        t.type({
          query: withDescription(t.string, 'What to look for'),
          mode: t.union([t.literal('fast'), t.literal('deep')]),
          filters: t.array(t.type({ field: t.string, value: t.union([t.number, t.boolean, t.null]) })),
          where: t.record(t.string, t.type({ near: t.tuple([t.number, t.number]) })),
        }),
        t.partial({ limit: t.Int, tags: t.readonlyArray(t.keyof({ a: null, b: null })), note: t.union([t.string, t.undefined]) }),
      ]),
      execute: () => 'ok',
    })
    expect(tool.schema).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for' },
        mode: { type: 'string', enum: ['fast', 'deep'] },
        filters: {
          type: 'array',
          items: {
            type: 'object',
            properties: { field: { type: 'string' }, value: { anyOf: [{ type: 'number' }, { type: 'boolean' }, { type: 'null' }] } },
            required: ['field', 'value'],
            additionalProperties: false,
          },
        },
        where: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: { near: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 } },
            required: ['near'],
            additionalProperties: false,
          },
        },
        limit: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        note: { type: 'string' },
      },
      required: ['query', 'mode', 'filters', 'where'],
      additionalProperties: false,
    })
    // Unknown keys are stripped at every level, as for codecs from rxagent's own copy.
    const decoded = tool.decodeArguments(
      JSON.parse(
        '{"query":"q","mode":"fast","filters":[{"field":"f","value":1,"extra":true}],' +
          '"where":{"home":{"near":[1,2],"extra":1},"__proto__":{"near":[3,4],"extra":2}},"limit":3,"extra":"x"}',
      ),
    )
    expect(isRight(decoded)).toBe(true)
    if (!isRight(decoded)) return
    const { where, ...rest } = decoded.right
    expect(rest).toEqual({ query: 'q', mode: 'fast', filters: [{ field: 'f', value: 1 }], limit: 3 })
    // A "__proto__" key stays a data key (with its value stripped too), never the record's prototype.
    expect(Object.getPrototypeOf(where)).toBe(Object.prototype)
    expect(Object.entries(where)).toEqual([['home', { near: [1, 2] }], ['__proto__', { near: [3, 4] }]])
    const rejected = tool.decodeArguments({ query: 'q', mode: 'slow', filters: [{ field: 'f', value: 'v' }], where: {} })
    expect(isLeft(rejected) && rejected.left).toEqual([
      'at mode: expected ("fast" | "deep"), got "slow"',
      'at filters[0].value: expected (number | boolean | null), got "v"',
    ])
  })

  it('a custom type from the other copy is still "no known JSON structure", not a copy problem', () => {
    const Custom = new theirs.Type<string, string, unknown>('Custom', (u): u is string => typeof u === 'string', theirs.success as never, theirs.identity)
    expect(() => toJsonSchema(theirs.type({ x: Custom }))).toThrow(/at parameters\.x to JSON Schema: Custom has no known JSON structure/)
  })

  it('a codec from a copy of another shape names the cause: two copies of io-ts', () => {
    const parameters = otherVersion.type({ path: otherVersion.string })
    expect(() => defineTool({ name: 'read', description: 'Read', parameters, execute: () => 'ok' })).toThrow(
      /Tool read: .*looks like an io-ts InterfaceType but does not have its shape: two copies of io-ts/,
    )
  })

  it('parameters that are not an io-ts codec at all say so', () => {
    const parameters = [{ type: 'object', properties: {} }] as unknown as ours.Mixed
    expect(() => defineTool({ name: 'raw', description: 'Raw', parameters, execute: () => 'ok' })).toThrow(
      'defineTool: invalid tool definition at parameters: expected an io-ts codec, a Standard Schema or a JSON Schema object, got an array of 1',
    )
  })

  it('decode errors read the same, and taggedUnion accepts members from the other copy', () => {
    const t = theirs
    const Shape = taggedUnion('kind', [t.type({ kind: t.literal('a'), n: t.number }), t.type({ kind: t.literal('b'), s: t.array(t.string) })], 'Shape')
    const result = decode(Shape, { kind: 'b', s: ['x', 5] })
    expect(isLeft(result) && result.left.issues.map((issue) => issue.message)).toEqual(['at s[1]: expected string, got 5'])
  })
})
