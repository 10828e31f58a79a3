/** `node --import ./test/support/ts-register.mjs file.ts`: runs the repository's TypeScript in a child process (see ts-hooks.mjs). */
import { register } from 'node:module'

register('./ts-hooks.mjs', import.meta.url)
