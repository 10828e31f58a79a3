/** Built-in policies for the loop's slots; each composes with user policies. */
export { maxTurnsPolicy } from './max-turns.js'
export { budgetPolicy, type BudgetLimits } from './budget.js'
export { toolDenyList, type DenyRule } from './tool-deny-list.js'
export { loopDetection, type LoopDetectionOptions } from './loop-detection.js'
