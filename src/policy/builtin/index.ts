/** Built-in policies for the loop's slots; each composes with user policies. */
export * from './max-turns.js'
export * from './budget.js'
export * from './tool-deny-list.js'
export * from './loop-detection.js'
