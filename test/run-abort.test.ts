import { describe, expect, it } from 'vitest'
import { OwnedAbort, RunAbort } from '../src/loop/run-abort.js'

describe('RunAbort over an OwnedAbort (no listener on the signal)', () => {
  it('tells every subscriber once, after the signal is aborted', () => {
    const owned = new OwnedAbort()
    const run = new RunAbort(owned.signal)
    const seen: boolean[] = []
    run.aborted$.subscribe(() => seen.push(owned.signal.aborted))
    run.aborted$.subscribe(() => seen.push(owned.signal.aborted))
    owned.abort()
    owned.abort()
    expect(seen).toEqual([true, true])
  })

  it('emits at once to a subscriber that comes after the abort', () => {
    const owned = new OwnedAbort()
    owned.abort()
    const run = new RunAbort(owned.signal)
    let told = 0
    run.aborted$.subscribe(() => told++)
    expect(told).toBe(1)
  })

  it('tells no one that unsubscribed, nor anyone once the run ended', () => {
    const owned = new OwnedAbort()
    const run = new RunAbort(owned.signal)
    let told = 0
    run.aborted$.subscribe(() => told++).unsubscribe()
    owned.abort()
    expect(told).toBe(0)
    const other = new OwnedAbort()
    const ended = new RunAbort(other.signal)
    const sub = ended.aborted$.subscribe(() => told++)
    sub.unsubscribe()
    ended.unsubscribe()
    other.abort()
    expect(told).toBe(0)
  })

  it('a plain AbortSignal is still listened to', () => {
    const controller = new AbortController()
    const run = new RunAbort(controller.signal)
    let told = 0
    run.aborted$.subscribe(() => told++)
    controller.abort()
    expect(told).toBe(1)
  })
})
