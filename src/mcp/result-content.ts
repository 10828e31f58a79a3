/**
 * An MCP tool result as rxagent tool output. What a model can read becomes
 * content; what only an app can use goes to `details`.
 *
 * | MCP | content | details |
 * |---|---|---|
 * | `text` | a text block | |
 * | `image` | an image block (base64) | |
 * | `resource` with `text` | a text block: `Resource <uri> (<mimeType>):` and the text | `blocks` |
 * | `resource` with an image `blob` | an image block | `blocks` |
 * | `resource` with another `blob` | a text block naming the URI and size | `blocks` |
 * | `resource_link` | a text block: `Resource link: <uri> (<name>) — <description>` | `blocks` |
 * | `audio`, anything else | a text block naming the kind | `blocks` |
 * | `structuredContent` | its JSON as text, only when there is no other content | `structuredContent` |
 *
 * `details` also names the `server` and its `tool` (the MCP name).
 */
import { imageBase64, text, type UserContent } from '../types/content.js'
import type { ToolOutput } from '../types/tool.js'

/** What an MCP tool result holds that the mapping reads (the SDK's `CallToolResult`, loosely). */
export interface McpResult {
  readonly content?: readonly unknown[]
  readonly structuredContent?: unknown
  readonly isError?: boolean
}

/** The `details` of an MCP tool's output. */
export interface McpToolDetails {
  /** The server's name in the `servers` option. */
  readonly server: string
  /** The tool's name on that server. */
  readonly tool: string
  /** The result's `structuredContent`, when it had one. */
  readonly structuredContent?: unknown
  /** The blocks the model saw only as a text description (resources, links, audio, unknown kinds), as the server sent them. */
  readonly blocks?: readonly unknown[]
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)
const str = (u: unknown): string | undefined => (typeof u === 'string' ? u : undefined)

/** The content a model sees for one MCP block, and whether the block also goes to `details.blocks`. */
function blockContent(block: unknown): { content: UserContent; kept: boolean } {
  if (!isRecord(block)) return { content: text(`[content of an unknown kind: ${JSON.stringify(block)}]`), kept: true }
  switch (block['type']) {
    case 'text':
      return { content: text(str(block['text']) ?? ''), kept: false }
    case 'image': {
      const data = str(block['data'])
      const mimeType = str(block['mimeType'])
      if (data !== undefined && mimeType !== undefined) return { content: imageBase64(data, mimeType), kept: false }
      break
    }
    case 'resource': {
      const resource = isRecord(block['resource']) ? block['resource'] : {}
      const uri = str(resource['uri']) ?? '(no uri)'
      const mimeType = str(resource['mimeType'])
      const label = `Resource ${uri}${mimeType === undefined ? '' : ` (${mimeType})`}`
      const body = str(resource['text'])
      if (body !== undefined) return { content: text(`${label}:\n${body}`), kept: true }
      const blob = str(resource['blob'])
      if (blob !== undefined && mimeType?.startsWith('image/') === true) return { content: imageBase64(blob, mimeType), kept: true }
      const bytes = blob === undefined ? 0 : Math.floor((blob.replace(/=+$/, '').length * 3) / 4)
      return { content: text(`${label}: ${bytes} bytes of binary data, not shown`), kept: true }
    }
    case 'resource_link': {
      const uri = str(block['uri']) ?? '(no uri)'
      const name = str(block['name'])
      const description = str(block['description'])
      return {
        content: text(`Resource link: ${uri}${name === undefined ? '' : ` (${name})`}${description === undefined ? '' : ` — ${description}`}`),
        kept: true,
      }
    }
  }
  const kind = str(block['type']) ?? 'unknown'
  const mimeType = str(block['mimeType'])
  return { content: text(`[${kind} content${mimeType === undefined ? '' : ` (${mimeType})`}, not shown]`), kept: true }
}

/** The tool output for a successful MCP result of `tool` on `server`. */
export function toolOutputOf(result: McpResult, server: string, tool: string): ToolOutput {
  const content: UserContent[] = []
  const blocks: unknown[] = []
  for (const block of result.content ?? []) {
    const mapped = blockContent(block)
    content.push(mapped.content)
    if (mapped.kept) blocks.push(block)
  }
  const structured = result.structuredContent
  if (content.length === 0 && structured !== undefined) content.push(text(JSON.stringify(structured)))
  const details: McpToolDetails = {
    server,
    tool,
    ...(structured !== undefined && { structuredContent: structured }),
    ...(blocks.length > 0 && { blocks }),
  }
  return { content, details }
}

/** The text of an MCP error result (`isError: true`): its text blocks, or a description of the rest. */
export function errorTextOf(result: McpResult): string {
  const parts = toolOutputOf(result, '', '').content.map((c) => (c.type === 'text' ? c.text : '[image]'))
  const joined = parts.join('\n').trim()
  return joined === '' ? 'the tool reported an error and no message' : joined
}

/** A progress notification as a progress update: its message, or `progress/total`. */
export function progressOutput(progress: { readonly progress: number; readonly total?: number; readonly message?: string }, server: string, tool: string): ToolOutput {
  const fraction = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`
  return {
    content: [text(progress.message ?? fraction)],
    details: { server, tool, progress: progress.progress, ...(progress.total !== undefined && { total: progress.total }), ...(progress.message !== undefined && { message: progress.message }) },
  }
}
