import {existsSync, readFileSync} from 'node:fs'
import {relative} from 'node:path'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

/** Seconds a file took in a recent full run (test/durations.json, `node scripts/test-durations.mjs`). */
const DURATIONS = new URL('../durations.json', import.meta.url)

/**
 * Longest files first. The suite's wall time on two cores is set by its tail: a harness file of
 * several minutes started last runs alone while the other workers idle. A clean clone (CI) has
 * no vitest cache to order by, so the order comes from the durations of a recorded run. A file
 * not in the record (a new one) goes first: it may be long, and a short one costs nothing there.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known: Record<string, number> = existsSync(DURATIONS) ? JSON.parse(readFileSync(DURATIONS, 'utf8')) : {}
    const root = this.ctx.config.root
    const seconds = (f: TestSpecification) => known[relative(root, f.moduleId)] ?? Number.POSITIVE_INFINITY
    return [...files].sort((a, b) => seconds(b) - seconds(a))
  }
}
