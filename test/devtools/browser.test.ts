/**
 * The devtools page in a real browser: headless Chromium (Debian's
 * `chromium`, driven by playwright-core) loads the page against a store
 * filled by a real scripted Agent run, checks the lanes and counts, answers
 * the pending approval from the page, draws a run's policy decisions, and keeps screenshots under
 * `test-artifacts/devtools/`. Without Chromium the suite is skipped, saying
 * how to install it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { serveDevtools, type DevtoolsServer } from '../../src/devtools/index.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { memorySessionStore } from '../../src/sessions/memory-store.js'
import { scriptedSession, type ScriptedSession } from './scripted-session.js'
import { streamingSession } from './streaming-session.js'
import { policySession } from './policy-session.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium) console.warn(`[devtools browser suite] SKIPPED: no Chromium at ${CHROMIUM}. Install it with: apt-get install -y chromium (or set CHROMIUM_PATH)`)
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'devtools')

describe.skipIf(!haveChromium)(`the devtools page in headless Chromium${haveChromium ? '' : ' (SKIPPED: apt-get install -y chromium)'}`, () => {
  let store: SessionStore
  let devtools: DevtoolsServer
  let session: ScriptedSession
  let browser: BrowserContext
  let page: Page
  let profile: string
  const pageErrors: string[] = []

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    store = memorySessionStore()
    session = await scriptedSession(store)
    devtools = await serveDevtools({ store, agents: { [session.sessionId]: session.agent } })
    profile = mkdtempSync(join(tmpdir(), 'rxagent-chromium-'))
    // A fresh profile each time (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      timeout: 60_000,
      viewport: { width: 1280, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    page = browser.pages()[0] ?? (await browser.newPage())
    page.setDefaultTimeout(30_000)
    page.on('pageerror', (e) => pageErrors.push(e.message))
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()))
  }, 120_000)

  afterAll(async () => {
    await session?.agent.session?.close()
    await browser?.close().catch(() => undefined)
    await devtools?.close()
    await store?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  it('lists the session, draws the waiting run live, and answers its approval from the page', async () => {
    await page.goto(devtools.url)
    await expect.poll(() => page.locator('#store-kind').textContent()).toBe('memory store')
    const entry = page.getByRole('button', { name: /demo-session/ })
    await entry.click()
    // The run stops at the approval: the page shows it waiting, with its arguments.
    const approval = page.locator('[data-approval="write-c"]')
    await approval.waitFor()
    expect(await approval.locator('pre').textContent()).toContain('"path": "c.txt"')
    await expect.poll(() => page.locator('[data-bar="approval-write-c"]').getAttribute('data-status')).toBe('waiting')
    expect(await page.locator('#live').isVisible()).toBe(true)
    await page.screenshot({ path: join(ARTIFACTS, 'waiting-for-approval.png'), fullPage: true })

    await approval.getByRole('button', { name: 'Approve write' }).click()
    await expect.poll(() => page.locator('#status').textContent()).toBe('Approved write-c.')
    await session.done
    // Live: the page redraws from the tail as the run finishes.
    await expect.poll(() => page.locator('#runs button').first().textContent(), { timeout: 30_000 }).not.toContain('(running)')
    await expect.poll(() => page.locator('[data-bar="turn-2"]').getAttribute('data-status')).toBe('ok')
    expect(await page.locator('#approvals').isHidden()).toBe(true)
  })

  it('draws one lane per tool call, parallel calls overlapping, and the per-turn charts', async () => {
    const lanes = await page.locator('[data-lane]').evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-lane'), g.getAttribute('data-kind'), Number(g.getAttribute('data-bars'))]))
    expect(lanes).toEqual([
      ['inputs', 'inputs', 0],
      ['model', 'model', 3],
      ['tool:read-a', 'tool', 1],
      ['tool:read-b', 'tool', 1],
      ['tool:write-c', 'tool', 2],
    ])
    const box = async (id: string) => (await page.locator(`[data-bar="${id}"]`).boundingBox())!
    const [a, b] = [await box('tool-read-a'), await box('tool-read-b')]
    expect(a.x).toBeLessThan(b.x + b.width)
    expect(b.x).toBeLessThan(a.x + a.width)
    expect(await page.locator('[data-lane="inputs"] [data-mark]').evaluateAll((ms) => ms.map((m) => m.getAttribute('data-mark')))).toEqual(['user', 'steering', 'dequeue', 'user'])
    expect(await page.locator('[data-lane="tool:write-c"] [data-mark]').count()).toBe(2)
    expect(await page.locator('[data-chart]').count()).toBe(4)
    expect(await page.locator('[data-chart="output"] rect[data-value]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-value')))).toEqual(['80', '40', '30'])
    expect(await page.locator('#run-meta').textContent()).toMatch(/^done · stop · .* · 3 turns · 3 tool calls · 5,550 tokens · \$0\.0\d{3}$/)
    await page.locator('#timeline').screenshot({ path: join(ARTIFACTS, 'timeline.png') })
    await page.screenshot({ path: join(ARTIFACTS, 'run.png'), fullPage: true })
  })

  it('zooms with the buttons and opens a message in the inspector from a bar', async () => {
    const width = async () => Number(await page.locator('#timeline svg').getAttribute('width'))
    const before = await width()
    await page.getByRole('button', { name: 'Zoom in' }).click()
    expect(await width()).toBeGreaterThan(before)
    await page.getByRole('button', { name: 'Fit' }).click()
    expect(await width()).toBe(before)
    await page.locator('#timeline').hover()
    await page.mouse.wheel(0, -200)
    await expect.poll(width).toBeGreaterThan(before)
    await page.getByRole('button', { name: 'Fit' }).click()
    await page.locator('[data-bar="turn-0"]').click()
    const inspector = page.locator('#message')
    await expect.poll(() => inspector.locator('h4').textContent()).toBe('assistant · scripted/scripted-1 · toolUse')
    expect(await inspector.textContent()).toContain('tool call read_slow (read-b)')
    expect(await inspector.locator('table').textContent()).toContain('1200')
    await page.getByRole('button', { name: /tool read_slow/ }).click()
    await expect.poll(() => inspector.locator('h4').textContent()).toBe('tool result: read_slow (read-b)')
    await page.screenshot({ path: join(ARTIFACTS, 'inspector.png'), fullPage: true })
  })

  it('draws a run streaming now: chunk marks, a retry, a fallback, the time to first token', async () => {
    const id = await streamingSession(store)
    await page.getByLabel('Search sessions').fill('release')
    await page.getByRole('button', { name: new RegExp(id) }).click()
    await expect.poll(() => page.locator('#session-title').textContent()).toBe(id)
    await expect.poll(() => page.locator('[data-bar="turn-1"]').getAttribute('data-status')).toBe('running')
    const marks = await page.locator('[data-lane="model"] [data-mark]').evaluateAll((ms) => ms.map((m) => m.getAttribute('data-mark')))
    expect(marks).toEqual(['thinking', 'text', 'retry', 'fallback', 'text', 'text'])
    expect(await page.locator('[data-chart="ttft"] rect[data-value]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-value')))).toEqual(['310', '430'])
    expect(await page.locator('[data-lane="tool:read-1"]').getAttribute('data-bars')).toBe('2')
    expect(await page.locator('#runs button').first().textContent()).toContain('(running)')
    await page.locator('#timeline').screenshot({ path: join(ARTIFACTS, 'streaming-timeline.png') })
    await page.screenshot({ path: join(ARTIFACTS, 'streaming.png'), fullPage: true })
  })

  it('draws the policy decisions of a run (skip, inject, stop) and opens one in the inspector', async () => {
    const id = await policySession(store)
    await page.getByLabel('Search sessions').fill('policy')
    await page.getByRole('button', { name: new RegExp(id) }).click()
    await expect.poll(() => page.locator('#session-title').textContent()).toBe(id)
    await expect.poll(() => page.locator('#run-meta').textContent()).toMatch(/^done · policyStop · one answer is enough · /)
    const policyMarks = (lane: string) => page.locator(`[data-lane="${lane}"] [data-mark="policy"]`)
    expect(await policyMarks('model').evaluateAll((ms) => ms.map((m) => m.getAttribute('aria-label')))).toEqual([
      'postTurn nudge: inject: open the decision',
      'postTurn one-answer: stop (one answer is enough): open the decision',
    ])
    expect(await policyMarks('tool:l-2').count()).toBe(1)
    expect(await policyMarks('tool:l-1').count()).toBe(0)
    await page.locator('#timeline').screenshot({ path: join(ARTIFACTS, 'policy-timeline.png') })
    const inspector = page.locator('#message')
    await policyMarks('model').last().click()
    await expect.poll(() => inspector.locator('h4').textContent()).toBe('policy one-answer · postTurn · stop')
    expect(await inspector.textContent()).toContain('reason: one answer is enough')
    await policyMarks('tool:l-2').press('Enter')
    await expect.poll(() => inspector.locator('h4').textContent()).toBe('policy no-secrets · preDispatch · skip')
    expect(await inspector.textContent()).toContain('tool call l-2')
    expect(await inspector.textContent()).toContain('reason: secrets are not looked up')
    await page.screenshot({ path: join(ARTIFACTS, 'policy.png'), fullPage: true })
  })

  it('searches sessions and raised no error on the page', async () => {
    await page.getByLabel('Search sessions').fill('nothing-like-it')
    await expect.poll(() => page.locator('#session-list').textContent()).toContain('No session matches')
    await page.getByLabel('Search sessions').fill('demo')
    await expect.poll(() => page.locator('#session-list button').count()).toBe(1)
    expect(pageErrors).toEqual([])
  })
})
