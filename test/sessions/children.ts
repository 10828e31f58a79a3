/** Child processes running test/sessions/children/*.ts, killed at the end of the file (and at exit) whatever happened. */
import { spawn, type ChildProcess } from 'node:child_process'
import { resolve } from 'node:path'

const REGISTER = resolve('test/support/ts-register.mjs')
/** How long a child may take to print what a test waits for (PGlite starting on a busy machine). */
const WAIT_MS = 90_000

/** One child: its output as lines, and ways to wait for them or kill it. */
export class Child {
  private out = ''
  private err = ''
  private readonly waiters = new Set<() => void>()
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  constructor(readonly process: ChildProcess) {
    process.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.out += chunk
      for (const wake of this.waiters) wake()
    })
    process.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.err += chunk))
    this.exited = new Promise((resolve) => process.on('exit', (code, signal) => {
      for (const wake of this.waiters) wake()
      resolve({ code, signal })
    }))
  }

  get pid(): number {
    return this.process.pid!
  }

  /** Every complete output line matching `pattern`. */
  lines(pattern: RegExp): RegExpMatchArray[] {
    return this.out
      .split('\n')
      .slice(0, -1)
      .map((line) => line.match(pattern))
      .filter((m): m is RegExpMatchArray => m !== null)
  }

  /** The first line matching `pattern` (and `accept`), waiting for it; rejects if the child exits first or after a while. */
  line(pattern: RegExp, accept: (match: RegExpMatchArray) => boolean = () => true): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`child ${this.pid}: no line matching ${pattern} in ${WAIT_MS} ms; stdout:\n${this.out}\nstderr:\n${this.err}`)), WAIT_MS)
      const done = (error?: Error, match?: RegExpMatchArray) => {
        clearTimeout(timer)
        this.waiters.delete(check)
        if (error === undefined) resolve(match!)
        else reject(error)
      }
      const check = () => {
        const found = this.lines(pattern).find(accept)
        if (found !== undefined) return done(undefined, found)
        if (this.process.exitCode !== null || this.process.signalCode !== null) done(new Error(`child ${this.pid} exited before a line matching ${pattern}; stderr:\n${this.err}`))
      }
      this.waiters.add(check)
      check()
    })
  }

  stderr(): string {
    return this.err
  }

  /** Waits for the child to end by itself. */
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exited
  }

  /** SIGKILL, and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL')
    await this.exited
  }
}

/** The children of one test file. */
export class ChildProcesses {
  private readonly all = new Set<Child>()
  private readonly atExit = () => this.killAll()

  constructor(private readonly script = 'test/sessions/children/pglite-writer.ts') {
    process.on('exit', this.atExit)
  }

  /** Starts `node <script> ...args` with the TypeScript hooks. */
  start(...args: string[]): Child {
    const child = new Child(spawn(process.execPath, ['--import', REGISTER, resolve(this.script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] }))
    this.all.add(child)
    return child
  }

  /** Kills every child still running (SIGKILL). */
  killAll(): void {
    process.removeListener('exit', this.atExit)
    for (const child of this.all) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL')
  }
}
