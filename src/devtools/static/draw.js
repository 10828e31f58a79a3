// The devtools' drawings: a run's timeline (lanes of bars and marks, as in
// the marble tests) and the per-turn charts, in plain SVG. The data is the
// RunTimeline of src/devtools/timeline-model.ts, as the API sends it.

const SVG = 'http://www.w3.org/2000/svg'
const LABEL_W = 170
const LANE_H = 26
const AXIS_H = 22
const PAD_R = 24

/** The letter a mark is drawn with (MARK_LETTERS in timeline-model.ts). */
export const MARK_LETTERS = {
  user: 'u', steering: 's', followUp: 'f', dequeue: 'd', command: 'c', text: 't', thinking: 'k', toolUse: 'a',
  retry: 'r', fallback: 'F', policy: 'P', approvalRequested: '?', approvalDecided: '!',
}
export const MARK_NAMES = {
  user: 'user message', steering: 'steering queued', followUp: 'follow-up queued', dequeue: 'queue taken', command: 'command',
  text: 'text chunks', thinking: 'thinking chunks', toolUse: 'tool-use chunks', retry: 'retry', fallback: 'fallback',
  policy: 'policy decision', approvalRequested: 'approval requested', approvalDecided: 'approval decided',
}

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = text
  return node
}

/** Makes `node` a button (click, Enter, Space) doing `open`. */
function clickable(node, label, open) {
  node.setAttribute('tabindex', '0')
  node.setAttribute('role', 'button')
  node.setAttribute('aria-label', label)
  node.addEventListener('click', open)
  node.addEventListener('keydown', (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), open()))
}

export function formatMs(ms) {
  if (ms === undefined || ms === null) return '—'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** A tick step (1, 2, 5 × 10^n ms) giving about one tick per 90 px. */
function tickStep(pxPerMs) {
  const target = 90 / pxPerMs
  const base = 10 ** Math.floor(Math.log10(Math.max(target, 1e-3)))
  return [1, 2, 5, 10].map((m) => m * base).find((s) => s >= target) ?? base * 10
}

/**
 * Draws `run` into `container`. `zoom` multiplies the scale that fits the
 * run into the container's width. `onSelect(position)` is called when a bar
 * with a message, or a policy mark, is clicked (or activated with Enter/Space).
 */
export function drawTimeline(container, run, zoom, onSelect) {
  const from = run.from
  const to = Math.max(run.end ?? run.to, from + 1)
  const duration = to - from
  const avail = Math.max(container.clientWidth - LABEL_W - PAD_R, 200)
  const pxPerMs = (avail / duration) * zoom
  const width = LABEL_W + duration * pxPerMs + PAD_R
  const height = AXIS_H + run.lanes.length * LANE_H + 4
  const x = (at) => LABEL_W + (at - from) * pxPerMs
  const svg = el('svg', { width, height, role: 'group', 'aria-label': `Timeline of run ${run.runId}: ${run.lanes.length} lanes` })

  const step = tickStep(pxPerMs)
  for (let t = 0; t <= duration; t += step) {
    svg.append(el('line', { class: 'grid', x1: x(from + t), x2: x(from + t), y1: AXIS_H - 4, y2: height }))
    svg.append(el('text', { class: 'axis', x: x(from + t) + 2, y: 12 }, `+${formatMs(t)}`))
  }

  run.lanes.forEach((lane, i) => {
    const y = AXIS_H + i * LANE_H
    const g = el('g', { 'data-lane': lane.id, 'data-kind': lane.kind, 'data-bars': lane.bars.length, 'data-marks': lane.marks.length })
    g.append(el('rect', { class: 'lane-bg', x: 0, y: y + 1, width, height: LANE_H - 2, opacity: i % 2 ? 0 : 1 }))
    g.append(el('text', { class: 'lane-label', x: 6, y: y + LANE_H / 2 + 4 }, lane.label.length > 26 ? `${lane.label.slice(0, 25)}…` : lane.label))
    for (const bar of lane.bars) {
      const end = bar.end ?? run.to
      const w = Math.max((end - bar.start) * pxPerMs, 3)
      const rect = el('rect', {
        class: `bar ${bar.kind} ${bar.status}`,
        x: x(bar.start), y: y + 5, width: w, height: LANE_H - 10, rx: 3,
        'data-bar': bar.id, 'data-status': bar.status, 'data-kind': bar.kind,
      })
      const open = bar.end === undefined ? ' (still open)' : ''
      rect.append(el('title', {}, `${bar.label}\n${bar.status}${open} · ${formatMs(end - bar.start)} · from +${formatMs(bar.start - from)}`))
      if (bar.position !== undefined) clickable(rect, `${bar.label}, ${bar.status}, ${formatMs(end - bar.start)}: open its message`, () => onSelect(bar.position))
      g.append(rect)
    }
    for (const mark of lane.marks) {
      const m = el('g', { class: `mark ${mark.kind}`, 'data-mark': mark.kind, transform: `translate(${x(mark.at)},${y + LANE_H / 2})` })
      m.append(el('circle', { r: 7 }))
      m.append(el('text', {}, MARK_LETTERS[mark.kind] ?? '·'))
      m.append(el('title', {}, `${mark.label}\n+${formatMs(mark.at - from)}`))
      if (mark.kind === 'policy') clickable(m, `${mark.label}: open the decision`, () => onSelect(mark.position))
      g.append(m)
    }
    svg.append(g)
  })
  container.replaceChildren(svg)
  return { pxPerMs, x }
}

/** One bar chart: `values` per turn (`undefined` drawn as "n/a"), `format` for the labels. */
function barChart(title, cls, turns, values, format, note) {
  const W = Math.max(280, 16 + turns.length * 52)
  const H = 130
  const left = 8
  const bottom = 20
  const max = Math.max(...values.map((v) => v ?? 0), 0)
  const bw = Math.min(46, (W - left * 2) / Math.max(turns.length, 1) - 6)
  const fig = document.createElement('figure')
  fig.dataset.chart = cls
  const caption = document.createElement('figcaption')
  caption.textContent = title
  const svg = el('svg', { width: W, height: H, role: 'img', 'aria-label': `${title}: ${values.map((v, i) => `turn ${turns[i].turnIndex} ${v === undefined ? 'n/a' : format(v)}`).join(', ')}` })
  svg.append(el('line', { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, stroke: '#d8dee6' }))
  values.forEach((v, i) => {
    const bx = left + i * (bw + 6)
    const h = v === undefined || max === 0 ? 0 : ((H - bottom - 16) * v) / max
    const r = el('rect', { class: `c-${cls}`, x: bx, y: H - bottom - h, width: bw, height: h, 'data-value': v ?? '' })
    r.append(el('title', {}, `turn ${turns[i].turnIndex}: ${v === undefined ? 'n/a' : format(v)}`))
    svg.append(r)
    svg.append(el('text', { x: bx, y: H - bottom - h - 3 }, v === undefined ? 'n/a' : format(v)))
    svg.append(el('text', { x: bx, y: H - 6 }, `t${turns[i].turnIndex}`))
  })
  fig.append(caption, svg)
  if (note !== undefined && values.some((v) => v === undefined)) {
    const p = document.createElement('p')
    p.className = 'muted note'
    p.textContent = note
    fig.append(p)
  }
  return fig
}

/** The per-turn charts of a run: tokens in and out, cost, time to first token. */
export function drawCharts(container, turns) {
  if (turns.length === 0) {
    const p = document.createElement('p')
    p.className = 'muted'
    p.textContent = 'No turns yet.'
    container.replaceChildren(p)
    return
  }
  const n = (v) => v.toLocaleString('en')
  container.replaceChildren(
    barChart('Input tokens', 'input', turns, turns.map((t) => t.inputTokens + t.cacheReadTokens + t.cacheWriteTokens), n),
    barChart('Output tokens', 'output', turns, turns.map((t) => t.outputTokens), n),
    barChart('Cost', 'cost', turns, turns.map((t) => t.cost), (v) => (v === 0 ? '$0' : `$${v >= 1 ? v.toFixed(2) : v.toPrecision(2)}`)),
    barChart('Time to first token', 'ttft', turns, turns.map((t) => t.ttftMs ?? undefined), formatMs,
      'n/a: no content came, or the message was logged without its stream marks (an older log) and was not watched live.'),
  )
}
