/**
 * A JSON Schema tool in an app that has not installed Ajv (simulated: every
 * Ajv module fails to load here, as `import('ajv')` does when it is absent).
 * The schema is still what the model is told; the arguments reach `execute`
 * unvalidated, as documented.
 */
import { describe, expect, it, vi } from 'vitest'
import { defineTool } from '../src/index.js'

const { missing } = vi.hoisted(() => ({
  missing: (): never => {
    throw Object.assign(new Error("Cannot find package 'ajv'"), { code: 'ERR_MODULE_NOT_FOUND' })
  },
}))
vi.mock('ajv', missing)
vi.mock('ajv/dist/2019.js', missing)
vi.mock('ajv/dist/2020.js', missing)

describe('a JSON Schema tool without Ajv', () => {
  const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
  const tool = defineTool({ name: 'json', description: 'd', parameters, execute: (args) => JSON.stringify(args) })

  it('Ajv cannot be imported here', async () => {
    await expect(import('ajv')).rejects.toThrow()
  })

  it('still tells the model its schema', () => {
    expect(tool.schema).toStrictEqual(parameters)
  })

  it('passes arguments through unvalidated, invalid ones included', async () => {
    const invalid = { path: 5, extra: true }
    expect(await tool.decodeArguments(invalid)).toStrictEqual({ _tag: 'Right', right: invalid })
    // Once the failed load has settled, synchronously.
    expect(tool.decodeArguments({})).toStrictEqual({ _tag: 'Right', right: {} })
  })

  it('every dialect passes through the same way', async () => {
    const draft07 = defineTool({
      name: 'json07',
      description: 'd',
      parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['x'] },
      execute: () => 'x',
    })
    expect(await draft07.decodeArguments({})).toStrictEqual({ _tag: 'Right', right: {} })
  })
})
