/**
 * Content blocks: the atomic parts every message is made of, tagged by `type`.
 * Which blocks a role may hold is enforced by the message codecs.
 */
import * as t from 'io-ts'
import { JsonObject, struct, taggedUnion } from './codec.js'

/** Plain text, to or from a model. */
export const TextContent = t.type({ type: t.literal('text'), text: t.string }, 'TextContent')
export type TextContent = t.TypeOf<typeof TextContent>

/**
 * A model's reasoning. `signature` is the provider's opaque integrity token that
 * must be replayed unchanged on later turns. A `redacted` block carries no
 * readable text; its encrypted payload travels in `signature`.
 */
export const ThinkingContent = struct(
  'ThinkingContent',
  { type: t.literal('thinking'), thinking: t.string },
  { signature: t.string, redacted: t.boolean },
)
export type ThinkingContent = t.TypeOf<typeof ThinkingContent>

/**
 * A model's request to run a tool. `arguments` is the parsed JSON object.
 * `partialJson` is present only when the arguments never completed (the
 * stream stopped before the call's end) or did not parse; `parseError` says
 * why they did not parse. Such a call is never executed.
 */
export const ToolCallContent = struct(
  'ToolCallContent',
  { type: t.literal('toolCall'), id: t.string, name: t.string, arguments: JsonObject },
  { partialJson: t.string, parseError: t.string },
)
export type ToolCallContent = t.TypeOf<typeof ToolCallContent>

/** Where an image's bytes are: inline base64, or a URL the provider fetches. */
export const ImageSource = taggedUnion(
  'type',
  [
    t.type({ type: t.literal('base64'), data: t.string, mimeType: t.string }, 'Base64ImageSource'),
    struct('UrlImageSource', { type: t.literal('url'), url: t.string }, { mimeType: t.string }),
  ],
  'ImageSource',
)
export type ImageSource = t.TypeOf<typeof ImageSource>

/** An image, in a user message or a tool result. */
export const ImageContent = t.type({ type: t.literal('image'), source: ImageSource }, 'ImageContent')
export type ImageContent = t.TypeOf<typeof ImageContent>

/**
 * Content the runtime has no type for (a provider's server-side tool result, a
 * citation, an app's own block), kept rather than dropped. `typeName` says what
 * it is; `data` is its JSON.
 */
export const ExtensionContent = t.type(
  { type: t.literal('extension'), typeName: t.string, data: t.unknown },
  'ExtensionContent',
)
export type ExtensionContent = t.TypeOf<typeof ExtensionContent>

/** Any content block. */
export const Content = taggedUnion(
  'type',
  [TextContent, ThinkingContent, ToolCallContent, ImageContent, ExtensionContent],
  'Content',
)
export type Content = t.TypeOf<typeof Content>

/** Blocks a user message or a tool result may hold. */
export const UserContent = taggedUnion('type', [TextContent, ImageContent, ExtensionContent], 'UserContent')
export type UserContent = t.TypeOf<typeof UserContent>

/** Blocks an assistant message may hold. */
export const AssistantContent = taggedUnion(
  'type',
  [TextContent, ThinkingContent, ToolCallContent, ExtensionContent],
  'AssistantContent',
)
export type AssistantContent = t.TypeOf<typeof AssistantContent>

/** Concatenates the text blocks of `blocks`, ignoring every other kind. */
export function extractText(blocks: readonly Content[]): string {
  let text = ''
  for (const block of blocks) if (block.type === 'text') text += block.text
  return text
}

/** A text block. */
export const text = (value: string): TextContent => ({ type: 'text', text: value })

/** An inline base64 image block. */
export const imageBase64 = (data: string, mimeType: string): ImageContent => ({
  type: 'image',
  source: { type: 'base64', data, mimeType },
})

/** A URL image block. */
export const imageUrl = (url: string, mimeType?: string): ImageContent => ({
  type: 'image',
  source: mimeType === undefined ? { type: 'url', url } : { type: 'url', url, mimeType },
})

export { JsonObject }
