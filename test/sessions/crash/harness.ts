/**
 * The parent's side of the crash and lease tests: start a child
 * (`child.ts`, transpiled by `test/support/child-build.ts`), read its JSON
 * lines as they come, kill it, wait for it with a deadline; a seeded random
 * source; every child still alive is killed by `killAllChildren()` (call it
 * in `afterAll`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { ChildConfig } from './child.js'

/** One JSON line a child printed. */
export interface ChildLine {
  readonly t: string
  readonly [key: string]: unknown
}

/** How a child ended. */
export interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface ChildHandle {
  readonly pid: number
  readonly config: ChildConfig
  /** Every line so far, in order. */
  readonly lines: readonly ChildLine[]
  /** The last lines of stderr (for failure messages). */
  stderr(): string
  /** SIGKILL now (once); `true` if this call sent it. */
  kill(): boolean
  /** Whether `kill()` sent SIGKILL. */
  readonly killed: boolean
  signal(signal: NodeJS.Signals): void
  /** Writes a line to the child's stdin. */
  send(line: string): void
  /** The first line (already seen or to come) that `match` accepts; rejects when the child exits without one, or after `timeoutMs`. */
  waitFor(match: (line: ChildLine) => boolean, what: string, timeoutMs?: number): Promise<ChildLine>
  /** Resolves when the process has exited; after `timeoutMs` it is killed and the promise rejects. */
  exited(timeoutMs?: number): Promise<ChildExit>
  /** A short account of what the child said, for failure messages. */
  describe(): string
}

const live = new Set<ChildProcess>()

/** SIGKILLs every child still running (for `afterAll`). */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}

/**
 * Starts `node <script> <config JSON>`; `onLine` sees every line as it
 * arrives (to kill at a chosen point).
 */
export function startChild(script: string, config: ChildConfig, onLine?: (line: ChildLine, child: ChildHandle) => void): ChildHandle {
  const child = spawn(process.execPath, ['--enable-source-maps', script, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] })
  live.add(child)
  const lines: ChildLine[] = []
  const waiters = new Set<() => void>()
  let stderr = ''
  let killed = false
  let exit: ChildExit | undefined
  const exitPromise = new Promise<ChildExit>((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child)
      exit = { code, signal }
      resolve(exit)
    })
  })
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  child.stdin.on('error', () => undefined)
  const handle: ChildHandle = {
    pid: child.pid!,
    config,
    lines,
    stderr: () => stderr,
    kill() {
      if (killed || exit !== undefined) return false
      killed = true
      return child.kill('SIGKILL')
    },
    get killed() {
      return killed
    },
    signal: (signal) => {
      if (exit === undefined) child.kill(signal)
    },
    send: (line) => {
      child.stdin.write(line + '\n')
    },
    waitFor(match, what, timeoutMs = 60_000) {
      return new Promise<ChildLine>((resolve, reject) => {
        const check = (): boolean => {
          const found = lines.find(match)
          if (found !== undefined) {
            done()
            resolve(found)
            return true
          }
          if (exit !== undefined && closed) {
            done()
            reject(new Error(`child ${child.pid} exited (${JSON.stringify(exit)}) without ${what}\n${handle.describe()}`))
            return true
          }
          return false
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`child ${child.pid}: no ${what} within ${timeoutMs} ms\n${handle.describe()}`))
        }, timeoutMs)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(waiter)
        }
        const waiter = () => void check()
        if (!check()) waiters.add(waiter)
      })
    },
    async exited(timeoutMs = 90_000) {
      let timer: NodeJS.Timeout | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL')
          reject(new Error(`child ${child.pid} still running after ${timeoutMs} ms (killed)\n${handle.describe()}`))
        }, timeoutMs)
      })
      try {
        const result = await Promise.race([exitPromise, deadline])
        await stdoutClosed
        return result
      } finally {
        clearTimeout(timer)
      }
    },
    describe() {
      const summary = lines.map((l) => (l.t === 'delta' || l.t === 'append' || l.t === 'appended' ? l.t[0] : JSON.stringify(l).slice(0, 300))).join('\n')
      return `config: ${JSON.stringify(config)}\nlines:\n${summary.slice(-6000)}\nstderr:\n${stderr}`
    },
  }
  let closed = false
  const reader = createInterface({ input: child.stdout })
  const stdoutClosed = new Promise<void>((resolve) => reader.on('close', resolve))
  reader.on('line', (text) => {
    let line: ChildLine
    try {
      line = JSON.parse(text) as ChildLine
    } catch {
      line = { t: 'text', text }
    }
    lines.push(line)
    onLine?.(line, handle)
    for (const waiter of [...waiters]) waiter()
  })
  reader.on('close', () => {
    closed = true
    void exitPromise.then(() => {
      for (const waiter of [...waiters]) waiter()
    })
  })
  return handle
}

/** A seeded random source (mulberry32): the same seed, the same kill points. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** Runs `task` over `items`, at most `parallel` at a time; results in item order. */
export async function inParallel<T, R>(items: readonly T[], parallel: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  let next = 0
  const lanes = Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await task(items[i]!, i)
    }
  })
  await Promise.all(lanes)
  return results
}
