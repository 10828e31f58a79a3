import { describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mcpFilesExample } from '../../examples/mcp-files.js'

describe('examples/mcp-files.ts', () => {
  it('an agent lists and reads files through the MCP file server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxagent-mcp-files-'))
    try {
      writeFileSync(join(dir, 'notes.md'), '# Notes\nThe launch is on Tuesday.\n')
      writeFileSync(join(dir, 'other.txt'), 'x')
      const { answer, events } = await mcpFilesExample(dir, 'notes.md')
      expect(answer).toBe('I read notes.md through the files server.')
      const ends = events.flatMap((e) => (e.type === 'toolExecutionEnd' ? [[e.toolName, e.isError, e.result.content]] : []))
      expect(ends).toEqual([
        ['files__list_files', false, [{ type: 'text', text: 'notes.md\nother.txt' }]],
        ['files__read_file', false, [{ type: 'text', text: '# Notes\nThe launch is on Tuesday.\n' }]],
      ])
      const updates = events.flatMap((e) => (e.type === 'toolExecutionUpdate' ? [e.partialResult.content] : []))
      expect(updates).toEqual([[{ type: 'text', text: 'reading notes.md (34 bytes)' }]])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  it('the server refuses a path outside its directory: an error result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxagent-mcp-files-'))
    try {
      const { events } = await mcpFilesExample(dir, '../../etc/passwd')
      const read = events.find((e) => e.type === 'toolExecutionEnd' && e.toolName === 'files__read_file')
      expect(read?.type === 'toolExecutionEnd' && [read.isError, read.result.content]).toEqual([true, [{ type: 'text', text: "Tool 'files__read_file' failed: ../../etc/passwd is outside the served directory" }]])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
