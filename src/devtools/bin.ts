#!/usr/bin/env node
/**
 * The `rxagent` command of an installed package (`npx rxagent devtools`);
 * `npm run devtools` runs it from a checkout. One command for now:
 * `devtools` (see `cli.ts`).
 */
import { DEVTOOLS_USAGE, UsageError, parseDevtoolsArgs, runDevtools } from './cli.js'
import { storeOpeners } from './stores.js'

const USAGE = `usage: rxagent <command>

commands:
  devtools   serve the devtools page over a session store (rxagent devtools --help)
`

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE)
    return command === undefined ? 2 : 0
  }
  if (command !== 'devtools') {
    process.stderr.write(`rxagent: unknown command '${command}'\n\n${USAGE}`)
    return 2
  }
  const args = parseDevtoolsArgs(rest)
  if (args.help) {
    process.stdout.write(DEVTOOLS_USAGE)
    return 0
  }
  const { stop } = await runDevtools(args, storeOpeners)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await stop()
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    if (error instanceof UsageError) process.stderr.write(`rxagent devtools: ${error.message}\n\n${DEVTOOLS_USAGE}`)
    else process.stderr.write(`rxagent: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = error instanceof UsageError ? 2 : 1
  },
)
