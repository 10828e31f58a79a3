/** Context management's public names; `src/index.ts` re-exports them from their files. */
export { estimateContextTokens, estimateTokens, type EstimateTokens } from './estimate-tokens.js'
export {
  compactionOf,
  slidingWindow,
  slidingWindowRecovery,
  type CompactionReport,
  type SlidingWindow,
  type SlidingWindowOptions,
  type WindowInfo,
  type WindowResult,
} from './sliding-window.js'
