/**
 * The Gemini part and candidate fields the runtime has no block for: the
 * decoder keeps them as extension blocks, the request builder replays them.
 */

/** Extension type names of Gemini parts the runtime has no block for; the request builder replays them as they came. */
export const partExtensionPrefix = 'google.part.'

/** The part fields that name what a part is, for parts kept as extensions. */
export const partKinds = [
  'inlineData',
  'fileData',
  'executableCode',
  'codeExecutionResult',
  'functionResponse',
  'toolCall',
  'toolResponse',
  'videoMetadata',
] as const

/** Candidate-level data kept as extension blocks (one per distinct value), emitted before `stop`. */
export const candidateMetadata = ['groundingMetadata', 'citationMetadata', 'urlContextMetadata'] as const
