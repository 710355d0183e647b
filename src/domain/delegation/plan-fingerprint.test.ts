import {createHash} from 'node:crypto'
import {expect, it} from 'vitest'
import {planFingerprint} from './planner.js'
import {OUTCOMES, type Hop} from './types.js'

/**
 * The plan fingerprint as it was written before it was made cheaper (a template string per
 * field and per hop): a preview's fingerprint must not change with the code that computes it (a
 * commit presents the one its preview showed, maybe to another build).
 */
function reference(operation: string, hops: readonly Hop[], recordStatus?: (recordId: string) => string | undefined): string {
  const ceilings: Array<readonly string[]> = []
  const byContent = new Map<string, string>()
  const place = (c: readonly string[] | null): string => {
    if (c === null) return '-'
    const text = JSON.stringify(c)
    let i = byContent.get(text)
    if (i === undefined) byContent.set(text, (i = String(ceilings.push(c) - 1)))
    return i
  }
  const f = (s: string | null): string => (s === null ? '-' : `${s.length}:${s}`)
  const hash = createHash('sha256').update(f(operation), 'utf16le')
  let chunk = ''
  for (const h of hops) {
    let line = `\n${f(h.agentId)}${f(h.edgeId)}${f(h.projectId)}${f(h.outcome)}${f(h.reason)}${f(h.delegator?.kind ?? null)}${f(h.delegator?.id ?? null)}${f(h.role)}${place(h.beforeCeiling)},${place(h.afterCeiling)},${f(h.recordId)}`
    if (recordStatus) line += f(h.recordId === null ? null : (recordStatus(h.recordId) ?? null))
    chunk += line
    if (chunk.length >= 65_536) {
      hash.update(chunk, 'utf16le')
      chunk = ''
    }
  }
  return hash.update(`${chunk}\n${JSON.stringify(ceilings)}`, 'utf16le').digest('hex')
}

it('the plan fingerprint is the one the earlier code gave, for every field shape (nulls, empty, long and non-ASCII texts)', () => {
  let seed = 11
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
  // Lengths past the prefixes made once (255), empty texts, texts that look like framing.
  const texts = [null, '', 'a', 'p1', 'é', '😀x', 'x'.repeat(255), 'y'.repeat(256), 'z'.repeat(1000), '-', '1:a', '\n']
  const ceilings = [null, ['project.read'], ['project.read', 'secret.use'], []]
  const hops: Hop[] = Array.from({length: 3000}, (_, i) => ({
    edgeId: pick(texts),
    agentId: `agent-${i}${pick(['', 'é', '-x', 'w'.repeat(300)])}`,
    projectId: pick(texts) ?? 'p',
    outcome: pick(OUTCOMES),
    reason: pick([null, 'cycle', 'too_deep'] as const),
    delegator: pick([null, {kind: 'user', id: 'u1'}, {kind: pick(texts) ?? '', id: pick(texts) ?? ''}]),
    role: pick(texts),
    // Equal ceilings in distinct arrays as well as shared ones.
    beforeCeiling: rand() < 0.5 ? pick(ceilings) : (pick(ceilings)?.slice() ?? null),
    afterCeiling: pick(ceilings),
    recordId: pick([null, `r${i}`, 'r0', 'y'.repeat(256)]),
  }))
  const statuses = new Map(hops.filter((h) => h.recordId).map((h) => [h.recordId!, pick([undefined, 'pending', 'adopted', ''])]))
  for (const n of [0, 1, 500, 3000]) {
    const some = hops.slice(0, n)
    expect(planFingerprint('adopt', some), `${n} hops`).toBe(reference('adopt', some))
    expect(planFingerprint('revert', some, (id) => statuses.get(id)), `${n} hops with statuses`).toBe(reference('revert', some, (id) => statuses.get(id)))
  }
})
