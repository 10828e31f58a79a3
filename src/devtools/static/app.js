// The devtools page: the session list, a session's runs, the chosen run's
// timeline, charts and messages, pending approvals; live through the
// session's server-sent events. Plain DOM, no framework.
import { MARK_LETTERS, MARK_NAMES, drawCharts, drawTimeline, formatMs } from './draw.js'

const $ = (id) => document.getElementById(id)
const state = { ttft: new Map(), sessionId: undefined, data: undefined, run: undefined, followLatest: true, zoom: 1, source: undefined, refresh: undefined, selected: undefined }

function h(tag, props = {}, ...children) {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else if (k === 'dataset') Object.assign(node.dataset, v)
    else if (v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : String(v))
  }
  node.append(...children.filter((c) => c !== undefined && c !== null))
  return node
}

function say(text) {
  $('status').textContent = text
}

async function api(path, init) {
  const res = await fetch(`/api/${path}`, init)
  const body = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }))
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`)
  return body
}

// ---- sessions ---------------------------------------------------------------

async function loadSessions() {
  const q = $('search').value
  try {
    const sessions = await api(`sessions?q=${encodeURIComponent(q)}`)
    $('session-list').replaceChildren(
      ...sessions.map((s) =>
        h('li', {},
          h('button', { type: 'button', 'aria-current': s.sessionId === state.sessionId ? 'true' : 'false', dataset: { session: s.sessionId }, onclick: () => openSession(s.sessionId) },
            s.sessionId, h('span', { class: 'sub' }, `${s.agentId} · ${s.length} entries · ${new Date(s.updatedAt).toLocaleString()}${s.live ? ' · live agent' : ''}`))),
      ),
    )
    if (sessions.length === 0) $('session-list').replaceChildren(h('li', { class: 'muted' }, q === '' ? 'No sessions in this store.' : `No session matches “${q}”.`))
  } catch (error) {
    say(`Could not list sessions: ${error.message}`)
  }
}

async function openSession(sessionId) {
  if (state.source) state.source.close()
  state.source = undefined
  state.sessionId = sessionId
  state.run = undefined
  state.followLatest = true
  state.selected = undefined
  state.zoom = 1
  say('')
  $('message').replaceChildren(h('p', { class: 'muted' }, 'Choose a message, a bar or a policy mark of the timeline.'))
  location.hash = `#/session/${encodeURIComponent(sessionId)}`
  for (const b of document.querySelectorAll('#session-list button')) b.setAttribute('aria-current', b.dataset.session === sessionId ? 'true' : 'false')
  await refresh()
  if (state.sessionId !== sessionId || state.data === undefined) return
  const source = new EventSource(`/api/sessions/${encodeURIComponent(sessionId)}/events?from=${state.data.timeline.lastPosition}`)
  state.source = source
  source.addEventListener('open', () => ($('live').hidden = false))
  source.addEventListener('error', () => ($('live').hidden = true))
  source.addEventListener('record', () => scheduleRefresh())
}

/** Records arrive one by one while a run streams: the session is re-read at most every 150 ms. */
function scheduleRefresh() {
  if (state.refresh !== undefined) return
  state.refresh = setTimeout(() => {
    state.refresh = undefined
    refresh()
  }, 150)
}

async function refresh() {
  const sessionId = state.sessionId
  try {
    const data = await api(`sessions/${encodeURIComponent(sessionId)}`)
    if (sessionId !== state.sessionId) return
    state.data = data
    keepTtft(data.timeline.runs)
    render()
    loadSessions()
  } catch (error) {
    say(`Could not read session ${sessionId}: ${error.message}`)
  }
}

/**
 * A finished message's time to first token comes from the marks its
 * `messageEnd` carries; a log written before them has none, and its chunks
 * are compacted when it ends: the times seen while watching such a run live
 * are kept here, so that its chart stays filled.
 */
function keepTtft(runs) {
  for (const run of runs) {
    run.turns = run.turns.map((t) => {
      const key = `${state.sessionId}\u0000${run.runId}\u0000${t.turnIndex}`
      if (t.ttftMs !== undefined) state.ttft.set(key, t.ttftMs)
      return t.ttftMs === undefined && state.ttft.has(key) ? { ...t, ttftMs: state.ttft.get(key) } : t
    })
  }
}

// ---- one session ------------------------------------------------------------

function render() {
  const { info, timeline } = state.data
  const runs = timeline.runs
  $('empty').hidden = true
  $('session').hidden = false
  $('session-title').textContent = info.sessionId
  $('session-meta').textContent = `agent ${info.agentId} · ${info.length} log entries · ${runs.length} run${runs.length === 1 ? '' : 's'} · updated ${new Date(info.updatedAt).toLocaleString()}${info.live ? ' · held by a live agent' : ''}`
  if (state.followLatest || state.run === undefined || state.run >= runs.length) state.run = runs.length - 1
  $('runs').replaceChildren(
    ...runs.map((r, i) =>
      h('button', { type: 'button', 'aria-pressed': i === state.run ? 'true' : 'false', dataset: { run: r.runId }, onclick: () => { state.run = i; state.followLatest = i === runs.length - 1; render() } },
        `Run ${i + 1}${r.status === 'done' ? '' : ` (${r.status})`}: ${r.title || r.runId}`)),
  )
  renderApprovals(timeline.pendingApprovals, info.live)
  const run = runs[state.run]
  if (run === undefined) {
    $('run-meta').textContent = 'No runs yet.'
    $('timeline').replaceChildren()
    $('charts').replaceChildren()
    $('message-list').replaceChildren()
    return
  }
  const took = run.end === undefined ? `running for ${formatMs(run.to - run.start)}` : `${formatMs(run.end - run.start)}`
  const tokens = run.turns.reduce((n, t) => n + t.totalTokens, 0)
  const cost = run.turns.reduce((n, t) => n + t.cost, 0)
  $('run-meta').textContent = `${run.status}${run.stopReason ? ` · ${run.stopReason}` : ''}${run.error ? ` · ${run.error}` : ''} · ${took} · ${run.turns.length} turn${run.turns.length === 1 ? '' : 's'} · ${run.lanes.length - 2} tool call${run.lanes.length === 3 ? '' : 's'} · ${tokens.toLocaleString('en')} tokens · $${cost.toFixed(4)}`
  drawTimeline($('timeline'), run, state.zoom, select)
  drawCharts($('charts'), run.turns)
  renderMessages(run)
}

function renderApprovals(pending, live) {
  $('approvals').hidden = pending.length === 0
  $('approval-list').replaceChildren(
    ...pending.map((p) => {
      const reason = h('input', { type: 'text', id: `reason-${p.toolCallId}`, placeholder: 'why not (optional)' })
      const answer = (approved) => answerApproval(p.toolCallId, approved ? { approved: true } : reason.value.trim() === '' ? { approved: false } : { approved: false, reason: reason.value.trim() })
      return h('li', { class: 'approval', dataset: { approval: p.toolCallId } },
        h('strong', {}, p.toolName), ` (${p.toolCallId}) waits since ${new Date(p.at).toLocaleTimeString()}`,
        h('pre', {}, JSON.stringify(p.args, null, 2)),
        live ? undefined : h('p', { class: 'muted' }, state.opensSessions
          ? 'No live agent holds this session here: answering opens it in this server (when no other process holds its lease) and the run goes on here.'
          : 'No live agent holding this session is registered with this server: answering will fail.'),
        h('div', { class: 'actions' },
          h('button', { type: 'button', onclick: () => answer(true) }, `Approve ${p.toolName}`),
          h('label', { for: reason.id }, 'Reason'), reason,
          h('button', { type: 'button', onclick: () => answer(false) }, `Reject ${p.toolName}`)))
    }),
  )
}

async function answerApproval(toolCallId, decision) {
  try {
    await api(`sessions/${encodeURIComponent(state.sessionId)}/approvals/${encodeURIComponent(toolCallId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(decision),
    })
    say(`${decision.approved ? 'Approved' : 'Rejected'} ${toolCallId}.`)
    scheduleRefresh()
  } catch (error) {
    say(`Could not answer ${toolCallId}: ${error.message}`)
  }
}

// ---- messages ---------------------------------------------------------------

function gist(m) {
  if (m.role === 'custom') return m.kind
  const parts = m.content.map((c) => (c.type === 'text' ? c.text : c.type === 'toolCall' ? `${c.name}(…)` : c.type === 'thinking' ? '[thinking]' : `[${c.type}]`))
  const s = parts.join(' ').replace(/\s+/g, ' ')
  return s.length > 70 ? `${s.slice(0, 69)}…` : s
}

function renderMessages(run) {
  $('message-list').replaceChildren(
    ...run.messages.map((item) =>
      h('li', {}, h('button', { type: 'button', 'aria-current': item.position === state.selected ? 'true' : 'false', dataset: { position: item.position }, onclick: () => select(item.position) },
        h('span', { class: 'role' }, item.message.role === 'toolResult' ? `tool ${item.message.toolName}` : item.message.role), `+${formatMs(item.at - run.from)} `, gist(item.message)))),
  )
  const chosen = run.messages.find((m) => m.position === state.selected)
  if (chosen) showMessage(chosen, run)
  const decision = (run.policyDecisions ?? []).find((d) => d.position === state.selected)
  if (decision) showDecision(decision, run)
}

function select(position) {
  state.selected = position
  const run = state.data.timeline.runs[state.run]
  renderMessages(run)
  $('message').focus?.()
}

function usageTable(m) {
  const rows = [['input', m.usage.input, m.cost.input], ['output', m.usage.output, m.cost.output], ['cache read', m.usage.cacheRead, m.cost.cacheRead], ['cache write', m.usage.cacheWrite, m.cost.cacheWrite], ['total', m.usage.total, m.cost.total]]
  return h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, 'tokens'), h('th', {}, 'cost'))),
    h('tbody', {}, ...rows.map(([name, tokens, cost]) => h('tr', {}, h('th', {}, name), h('td', {}, String(tokens)), h('td', {}, `$${cost.toFixed(6)}`)))))
}

function block(c) {
  switch (c.type) {
    case 'text': return h('pre', {}, c.text)
    case 'thinking': return h('details', {}, h('summary', {}, 'thinking'), h('pre', {}, c.thinking))
    case 'toolCall': return h('div', {}, h('h5', {}, `tool call ${c.name} (${c.id})`), h('pre', {}, JSON.stringify(c.arguments, null, 2)))
    case 'image': return h('p', { class: 'muted' }, `[image ${c.source.type === 'url' ? c.source.url : c.source.mimeType}]`)
    default: return h('pre', {}, JSON.stringify(c, null, 2))
  }
}

function showMessage(item, run) {
  const m = item.message
  const head = h('h4', {}, m.role === 'toolResult' ? `tool result: ${m.toolName} (${m.toolCallId})${m.isError ? ' — error' : ''}` : m.role === 'assistant' ? `assistant · ${m.provider}/${m.model} · ${m.stopReason}` : m.role)
  const parts = [head, h('p', { class: 'muted' }, `record ${item.position} · +${formatMs(item.at - run.from)}`)]
  if (m.role === 'custom') parts.push(h('pre', {}, JSON.stringify(m.data, null, 2)))
  else parts.push(...m.content.map(block))
  if (m.role === 'assistant') {
    if (m.errorMessage) parts.push(h('p', {}, `error: ${m.errorMessage}`))
    parts.push(usageTable(m))
  }
  if (m.role === 'toolResult' && m.details !== undefined) parts.push(h('details', {}, h('summary', {}, 'details'), h('pre', {}, JSON.stringify(m.details, null, 2))))
  $('message').replaceChildren(...parts)
}

function showDecision(d, run) {
  const why = d.reason ?? (d.action === 'inject' ? 'none given (an injection adds messages, shown in the list)' : 'none given')
  $('message').replaceChildren(
    h('h4', {}, `policy ${d.policy} · ${d.slot} · ${d.action}`),
    h('p', { class: 'muted' }, `record ${d.position} · +${formatMs(d.at - run.from)}${d.toolCallId ? ` · tool call ${d.toolCallId}` : ''}`),
    h('p', {}, h('strong', {}, 'reason: '), why),
  )
}

// ---- zoom and start ---------------------------------------------------------

function zoom(factor) {
  state.zoom = Math.min(Math.max(state.zoom * factor, 0.25), 400)
  if (state.data) render()
}

$('zoom-in').addEventListener('click', () => zoom(1.5))
$('zoom-out').addEventListener('click', () => zoom(1 / 1.5))
$('zoom-fit').addEventListener('click', () => { state.zoom = 1; if (state.data) render() })
$('timeline').addEventListener('wheel', (e) => {
  if (Math.abs(e.deltaY) <= Math.abs(e.deltaX)) return
  e.preventDefault()
  const box = $('timeline')
  const before = box.scrollLeft + e.offsetX
  const factor = e.deltaY < 0 ? 1.25 : 0.8
  zoom(factor)
  box.scrollLeft = before * factor - e.offsetX
}, { passive: false })
$('timeline').addEventListener('keydown', (e) => {
  if (e.key === '+' || e.key === '=') zoom(1.5)
  else if (e.key === '-') zoom(1 / 1.5)
})
let searchTimer
$('search').addEventListener('input', () => {
  clearTimeout(searchTimer)
  searchTimer = setTimeout(loadSessions, 200)
})
$('legend').replaceChildren(
  'Bars: ', h('b', {}, 'model call'), ' per turn, ', h('b', {}, 'tool execution'), ' per call (overlaps ran together), ', h('b', {}, 'approval wait'),
  '; purple while running, red on error, grey when aborted. Marks: ',
  ...Object.entries(MARK_LETTERS).map(([kind, letter], i) => `${i ? ', ' : ''}${letter} ${MARK_NAMES[kind]}`),
  '. Chunk marks are drawn only while a message streams; a finished message keeps its time to first token, retries and fallbacks. A policy mark opens its decision.',
)

api('info').then((info) => {
  $('store-kind').textContent = `${info.storeKind} store`
  state.opensSessions = info.opensSessions
}, (error) => say(error.message))
await loadSessions()
const hash = /^#\/session\/(.+)$/.exec(location.hash)
if (hash) openSession(decodeURIComponent(hash[1]))
