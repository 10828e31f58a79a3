// CPU time of other processes, from /proc (Linux): a process's own, and a PostgreSQL server's
// (the postmaster, its live backends, and the backends that exited: the postmaster's reaped children).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'

let tick
const msPerTick = () => (tick ??= 1000 / (Number(tryRun(() => execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())) || 100))
const tryRun = (f) => {
  try {
    return f()
  } catch {
    return undefined
  }
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, …]; undefined when gone. */
function stat(pid) {
  const text = tryRun(() => readFileSync(`/proc/${pid}/stat`, 'utf8'))
  if (text === undefined) return undefined
  return text.slice(text.lastIndexOf(')') + 2).split(' ')
}
// After the name: index 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime.
const own = (f) => Number(f[11]) + Number(f[12])
const reaped = (f) => Number(f[13]) + Number(f[14])

/** Whether CPU times can be read here. */
export const procAvailable = () => existsSync('/proc/self/stat')

/** The CPU time (ms, user + system) of a PostgreSQL server whose postmaster is `pid`, or undefined. */
export function serverCpuMs(pid) {
  if (pid === undefined || !procAvailable()) return undefined
  const pm = stat(pid)
  if (pm === undefined) return undefined
  let ticks = own(pm) + reaped(pm)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const f = stat(entry)
    if (f !== undefined && Number(f[1]) === pid) ticks += own(f)
  }
  return ticks * msPerTick()
}

/** The postmaster's pid of the cluster whose data directory is `dataDir` (first line of postmaster.pid). */
export function postmasterPid(dataDir) {
  const text = dataDir === undefined ? undefined : tryRun(() => readFileSync(`${dataDir}/postmaster.pid`, 'utf8'))
  const pid = Number(text?.split('\n')[0])
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** The machine's CPU counters (/proc/stat, all cores): `{ busy, total }` in ticks, or undefined. */
export function machineTicks() {
  const line = tryRun(() => readFileSync('/proc/stat', 'utf8').split('\n')[0])
  if (line === undefined || !line.startsWith('cpu ')) return undefined
  const f = line.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0)
  return { busy: total - f[3] - f[4], total }
}

/** The fraction of the machine's CPU time that was busy between two `machineTicks()`, or undefined. */
export const machineBusy = (a, b) => (a === undefined || b === undefined || b.total === a.total ? undefined : (b.busy - a.busy) / (b.total - a.total))
