// Installs the peers of bench/package.json (`npm ci --prefix bench`) unless bench/node_modules already
// holds exactly the locked versions: `npm ci` deletes and reinstalls the whole tree every time, about
// 25 s of `npm run bench` on a 2-core host for nothing when it is already there.
//   node bench/peers.mjs
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8'))

/** The first locked package that is missing (and not optional) or at another version, or undefined. */
function firstMismatch() {
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path.startsWith('node_modules/') || entry.link) continue
    const manifest = join(here, path, 'package.json')
    if (!existsSync(manifest)) {
      // Platform-specific optional packages (another OS or CPU) are locked but never installed.
      if (entry.optional || entry.devOptional) continue
      return `${path} is missing`
    }
    const { version } = JSON.parse(readFileSync(manifest, 'utf8'))
    if (version !== entry.version) return `${path} is ${version}, locked ${entry.version}`
  }
  return undefined
}

const why = existsSync(join(here, 'node_modules')) ? firstMismatch() : 'bench/node_modules is missing'
if (why === undefined) {
  process.stderr.write(`peers        bench/node_modules matches bench/package-lock.json (${Object.keys(lock.packages).length - 1} packages)\n`)
} else {
  process.stderr.write(`peers        ${why}: npm ci --prefix bench\n`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const out = spawnSync(npm, ['ci', '--prefix', here, '--no-audit', '--no-fund'], { stdio: 'inherit' })
  process.exit(out.status ?? 1)
}
