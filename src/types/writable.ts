/**
 * `T` with its fields writable: an object built field by field before it is
 * frozen (a state, a message, a request's options).
 *
 * Internal: not exported from the package.
 */
export type Writable<T> = { -readonly [K in keyof T]: T[K] }
