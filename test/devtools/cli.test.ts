/** `rxagent devtools`'s command line: flags, store specs, and serving over the store a spec opens. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_DEVTOOLS_PORT, DEFAULT_DEVTOOLS_STORE, UsageError, openStore, parseDevtoolsArgs, runDevtools, type StoreOpeners } from '../../src/devtools/cli.js'
import { devtoolsSessionUrl } from '../../src/devtools/server.js'
import { memorySessionStore } from '../../src/sessions/memory-store.js'

const opened: string[] = []
const openers: StoreOpeners = {
  pglite: async (dir) => (opened.push(`pglite ${dir}`), memorySessionStore()),
  postgres: async (url) => (opened.push(`postgres ${url}`), memorySessionStore()),
}

describe('rxagent devtools', () => {
  it('parses its flags, with the demo store and port as defaults', () => {
    expect(parseDevtoolsArgs([])).toEqual({ store: DEFAULT_DEVTOOLS_STORE, port: DEFAULT_DEVTOOLS_PORT, host: '127.0.0.1', help: false })
    expect(parseDevtoolsArgs(['--store', 'postgres://u@h/db', '--port=0', '--host', '::1'])).toEqual({ store: 'postgres://u@h/db', port: 0, host: '::1', help: false })
    expect(parseDevtoolsArgs(['-h']).help).toBe(true)
    expect(() => parseDevtoolsArgs(['--port', '99999'])).toThrow(new UsageError("--port must be a whole number from 0 to 65535, got '99999'"))
    expect(() => parseDevtoolsArgs(['--store'])).toThrow('--store needs a value')
    expect(() => parseDevtoolsArgs(['serve'])).toThrow("unknown argument 'serve'")
  })

  it('opens the store a spec names, and says which specs there are', async () => {
    await openStore('pglite:.rxagent/demo-session', openers)
    await openStore('postgresql://localhost/x', openers)
    expect(opened).toEqual(['pglite .rxagent/demo-session', 'postgres postgresql://localhost/x'])
    await expect(openStore('pglite:', openers)).rejects.toThrow('needs a directory')
    await expect(openStore('mysql://x', openers)).rejects.toThrow("--store must be pglite:<dir> or postgres://…, got 'mysql://x'")
  })

  it('serves the page over the store, prints its address (never a password), and closes both', async () => {
    const lines: string[] = []
    const { server, store, stop } = await runDevtools({ store: 'postgres://me:secret@db/x', port: 0, host: '127.0.0.1', help: false }, openers, (l) => lines.push(l))
    expect(lines).toEqual([`rxagent devtools: ${server.url} (memory store postgres://me:***@db/x)`])
    expect((await fetch(server.url)).status).toBe(200)
    expect(devtoolsSessionUrl(server.url, 'a b/c')).toBe(`${server.url}#/session/a%20b%2Fc`)
    await stop()
    await expect(fetch(server.url)).rejects.toThrow()
    await expect(store.list()).rejects.toThrow()
  })
})
