export * from './estimate-tokens.js'
export * from './sliding-window.js'
