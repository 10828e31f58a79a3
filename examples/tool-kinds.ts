// Writing a tool: the README's tools, one per kind of parameters (Zod, JSON Schema, io-ts).
import { promises as fs, statSync } from 'node:fs'
import * as t from 'io-ts'
import { z } from 'zod'
import { defineTool, withDescription } from '../src/index.js'

/** Zod 4: a Standard Schema that converts itself to JSON Schema. */
export const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a UTF-8 file of the project.',
  parameters: z.object({
    path: z.string().describe('Path relative to the project root'),
    range: z.object({ start: z.number().int(), end: z.number().int() }).optional(),
  }),
  timeoutMs: 5_000,
  execute: async ({ path, range }, { signal }) => {
    const text = await fs.readFile(path, { encoding: 'utf8', signal })
    return range === undefined ? text : text.split('\n').slice(range.start, range.end).join('\n')
  },
})

/** A plain JSON Schema, validated by Ajv when installed; the arguments' type is given. */
export const stat = defineTool<{ path: string }>({
  name: 'stat',
  description: 'File size.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: ({ path }) => String(statSync(path).size),
})

/** io-ts, the fast path. */
export const readFileIoTs = defineTool({
  name: 'read_file',
  description: 'Reads a UTF-8 file of the project.',
  parameters: t.type({
    path: withDescription(t.string, 'Path relative to the project root'),
    range: t.union([t.undefined, t.type({ start: t.Int, end: t.Int })]),
  }),
  execute: async ({ path, range }) => {
    const text = await fs.readFile(path, 'utf8')
    return range === undefined ? text : text.split('\n').slice(range.start, range.end).join('\n')
  },
})
