/**
 * Arguments checked against a JSON Schema: what an MCP tool's parameters are.
 * Kept to one small function so that a JSON Schema tool kind in the core can
 * replace it without touching the rest of `rxagent/mcp`.
 */
import { left, right, type Either } from 'fp-ts/lib/Either.js'
import { describeValue, type JsonObject } from '../types/codec.js'
import type { AjvLike } from './sdk.js'

/** Decodes raw arguments against `schema`: the arguments unchanged, or each problem with its path. */
export type ArgumentsDecoder = (raw: unknown) => Either<readonly string[], JsonObject>

/**
 * A decoder for arguments of `schema`. With `ajv`, a schema Ajv cannot compile
 * and a missing Ajv both leave arguments unchecked beyond being an object (the
 * server validates them anyway, and its error becomes the result).
 */
export function jsonSchemaArguments(schema: JsonObject, ajv: AjvLike | undefined): ArgumentsDecoder {
  let validate: ReturnType<AjvLike['compile']> | undefined
  if (ajv !== undefined) {
    try {
      // `$schema` names a draft Ajv may not have loaded; the keywords are what matter.
      const { $schema: _ignored, ...rest } = schema
      validate = ajv.compile(rest)
    } catch {
      validate = undefined
    }
  }
  return (raw) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return left([`arguments: expected an object, got ${describeValue(raw)}`])
    if (validate === undefined || validate(raw)) return right(raw as JsonObject)
    return left((validate.errors ?? []).map((e) => `arguments${e.instancePath}: ${e.message ?? 'is invalid'}${detail(e.params)}`))
  }
}

/** Ajv's parameters that name what is missing or extra, which its message leaves out. */
function detail(params: unknown): string {
  if (typeof params !== 'object' || params === null) return ''
  const p = params as { missingProperty?: unknown; additionalProperty?: unknown; allowedValues?: unknown }
  if (typeof p.additionalProperty === 'string') return ` (${JSON.stringify(p.additionalProperty)})`
  if (Array.isArray(p.allowedValues)) return `: ${p.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return ''
}
