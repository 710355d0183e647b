/**
 * Hops decided by earlier plans of one start-up pass, kept while the world under them is
 * unchanged: the pass plans each hop's chain (100k chains, ~3 hops decided each) on one world,
 * and a plan stops at a kept hop as at one it decided (planner.ts `planAdoption`). Each kept hop
 * is linked to its parent's, so `dropKept` of an agent whose edge changed drops every hop
 * decided below it as well (a hop's outcome, depth and ceiling follow from its parent's).
 */
export interface KeptHops<H> {
  hops: Map<string, H>
  /** Agent ID -> the agents whose kept hop was decided under its hop. */
  children: Map<string, string[]>
}

export const newKeptHops = <H>(): KeptHops<H> => ({hops: new Map(), children: new Map()})

/** Drops every kept hop (the world under them was read again). */
export function clearKept<H>(kept: KeptHops<H>): void {
  kept.hops.clear()
  kept.children.clear()
}

/** Drops the agent's kept hop and every kept hop below it. */
export function dropKept<H>(kept: KeptHops<H>, agentId: string): void {
  const todo = [agentId]
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    kept.hops.delete(id)
    const below = kept.children.get(id)
    if (below) {
      kept.children.delete(id)
      todo.push(...below)
    }
  }
}
