/**
 * Starting a `node:http` server the way every rxagent server does (the SSE
 * helper, the devtools page, `serveMcp`): listen, then name where it is.
 * Type-only imports: a module that imports this loads no Node module.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Listens on `port` (0: a free one) and `host`; resolves with the server's
 * origin, `http://127.0.0.1:4477` (an IPv6 address in brackets). Rejects with
 * the listen error (a port in use, a host that is not local).
 */
export function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address() as AddressInfo
      resolve(`http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`)
    })
  })
}
