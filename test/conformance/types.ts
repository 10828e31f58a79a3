/**
 * The conformance check (`npm run conformance`): every file under
 * ../shared/fixtures replayed through the matching adapter. Each provider
 * folder has a suite; a suite checks one file and says what it found.
 */

/** The verdict on one fixture file. */
export interface FileVerdict {
  readonly ok: boolean
  /** One line: what was checked (e.g. "3 responses, 2 tool calls, usage 12/30") or what differed. */
  readonly detail: string
}

/** Checks one fixture file of a provider folder; `undefined` means "not a fixture this suite knows" (reported as failed). */
export type ConformanceSuite = (path: string, contents: string) => FileVerdict | undefined | Promise<FileVerdict | undefined>
