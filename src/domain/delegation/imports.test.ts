import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

/**
 * Issue 31 item 5: no import circle among the delegation modules (type imports included), so
 * the planner, the admin service and the start-up run load in one order and each can be used
 * alone (the planner bench loads all three). Reads the modules' `import`/`export … from` lines.
 */
const here = dirname(fileURLToPath(import.meta.url))
const modules = readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))

function importsOf(file: string): string[] {
  const text = readFileSync(join(here, file), 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/^(?:import|export)\b[^'"]*?\bfrom\s+'\.\/([^']+)\.js'/gm)) out.push(`${m[1]}.ts`)
  return out.filter((f) => modules.includes(f))
}

/** A circle as a list of modules, or null. */
function findCircle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (m: string): string[] | null => {
    if (state.get(m) === 'done') return null
    if (state.get(m) === 'open') return [...path.slice(path.indexOf(m)), m]
    state.set(m, 'open')
    path.push(m)
    for (const d of graph.get(m) ?? []) {
      const c = visit(d)
      if (c) return c
    }
    path.pop()
    state.set(m, 'done')
    return null
  }
  for (const m of graph.keys()) {
    const c = visit(m)
    if (c) return c
  }
  return null
}

describe('delegation modules', () => {
  it('import one another without a circle', () => {
    const graph = new Map(modules.map((m) => [m, importsOf(m)]))
    // The reader sees the imports it must (guards the regular expression against a silent miss).
    expect(graph.get('startup.ts')).toEqual(expect.arrayContaining(['backfill.ts', 'startup-adoption.ts']))
    expect(graph.get('adoption-service.ts')).toContain('planner.ts')
    expect(findCircle(graph)).toBeNull()
  })

  it('the check finds a circle when there is one', () => {
    expect(findCircle(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']]]))).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts'])
  })
})
