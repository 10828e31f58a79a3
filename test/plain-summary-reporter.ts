/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that any
 * CI can read without parsing vitest's colored summary.
 */
import type { Reporter, TestModule } from 'vitest/node'

export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
      // A file that failed to load has no tests but is a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++
    }
    console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}
