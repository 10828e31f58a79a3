/** The pure parts of rxagent/mcp: names, result mapping, argument validation. */
import { describe, expect, it } from 'vitest'
import { fitName, sanitizeName, toolNameFor, uniqueNames } from '../../src/mcp/names.js'
import { errorTextOf, progressOutput, toolOutputOf } from '../../src/mcp/result-content.js'
import { jsonSchemaArguments } from '../../src/mcp/json-schema-arguments.js'
import { loadAjv } from '../../src/mcp/sdk.js'
import { secretsOfConfig } from '../../src/mcp/connection.js'

describe('tool names', () => {
  it('prefix, sanitize, cut with a hash, make unique', () => {
    expect(toolNameFor('files', 'read_file', true)).toBe('files__read_file')
    expect(toolNameFor('files', 'read.file/v2 (beta)', false)).toBe('read_file_v2__beta_')
    expect(sanitizeName('')).toBe('_')
    const long = toolNameFor('server', 'x'.repeat(100), true)
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^server__x+_[0-9a-f]{8}$/)
    expect(fitName(`${'y'.repeat(60)}a${'z'.repeat(10)}`)).not.toBe(fitName(`${'y'.repeat(60)}b${'z'.repeat(10)}`))
    expect(uniqueNames(['a', 'b', 'a', 'a'])).toEqual(['a', 'b', 'a_2', 'a_3'])
    const full = 'q'.repeat(64)
    expect(uniqueNames([full, full])).toEqual([full, `${'q'.repeat(62)}_2`])
  })
})

describe('results', () => {
  it('audio and unknown kinds are named for the model and kept in details', () => {
    const audio = { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }
    const odd = { type: 'hologram' }
    const out = toolOutputOf({ content: [audio, odd, 'not an object'] }, 's', 't')
    expect(out.content).toEqual([
      { type: 'text', text: '[audio content (audio/wav), not shown]' },
      { type: 'text', text: '[hologram content, not shown]' },
      { type: 'text', text: '[content of an unknown kind: "not an object"]' },
    ])
    expect(out.details).toEqual({ server: 's', tool: 't', blocks: [audio, odd, 'not an object'] })
  })

  it('an image blob resource stays an image; structured content with content is not repeated as text', () => {
    const out = toolOutputOf(
      { content: [{ type: 'resource', resource: { uri: 'mem://p.png', mimeType: 'image/png', blob: 'iVBOR' } }, { type: 'text', text: 'hi' }], structuredContent: { a: 1 } },
      's',
      't',
    )
    expect(out.content).toEqual([
      { type: 'image', source: { type: 'base64', data: 'iVBOR', mimeType: 'image/png' } },
      { type: 'text', text: 'hi' },
    ])
    expect(out.details).toMatchObject({ structuredContent: { a: 1 } })
  })

  it('error text and progress', () => {
    expect(errorTextOf({ isError: true, content: [] })).toBe('the tool reported an error and no message')
    expect(errorTextOf({ isError: true, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb')
    expect(progressOutput({ progress: 2, total: 5 }, 's', 't')).toEqual({ content: [{ type: 'text', text: '2/5' }], details: { server: 's', tool: 't', progress: 2, total: 5 } })
  })
})

describe('arguments', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' }, mode: { enum: ['a', 'b'] } }, required: ['n'], additionalProperties: false }

  it('with Ajv: every problem, with its path', async () => {
    const decode = jsonSchemaArguments({ $schema: 'http://json-schema.org/draft-07/schema#', ...schema }, await loadAjv())
    expect(decode({ n: 1, mode: 'a' })).toEqual({ _tag: 'Right', right: { n: 1, mode: 'a' } })
    const bad = decode({ n: 1.5, mode: 'c', extra: true })
    expect(bad._tag === 'Left' && [...bad.left].sort()).toEqual([
      'arguments/mode: must be equal to one of the allowed values: "a", "b"',
      'arguments/n: must be integer',
      'arguments: must NOT have additional properties ("extra")',
    ])
    expect(decode([1])).toEqual({ _tag: 'Left', left: ['arguments: expected an object, got an array of 1'] })
  })

  it('without Ajv (or a schema it cannot compile): any object passes, the server validates', () => {
    expect(jsonSchemaArguments(schema, undefined)({ n: 'x' })._tag).toBe('Right')
    const broken = jsonSchemaArguments({ type: 'object', properties: { n: { $ref: '#/nowhere' } } }, { compile: () => { throw new Error('cannot') } })
    expect(broken({ n: 'x' })._tag).toBe('Right')
    expect(broken(null)._tag).toBe('Left')
  })
})

describe('secrets', () => {
  it('credential headers, credential query parameters, env values', () => {
    expect(secretsOfConfig({ url: 'https://x/mcp?access_token=tok-1234567890', headers: { Authorization: 'Bearer abcdefghijkl', Accept: 'application/json' } })).toEqual(
      expect.arrayContaining(['Bearer abcdefghijkl', 'abcdefghijkl', 'tok-1234567890']),
    )
    expect(secretsOfConfig({ url: 'https://x/mcp', headers: { Accept: 'application/json' } })).toEqual([])
    expect(secretsOfConfig({ command: 'x', env: { API_KEY: 'sk-0123456789', DEBUG: '1' } })).toEqual(['sk-0123456789'])
  })
})
