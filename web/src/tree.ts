/** Reads a dotted key of a nested settings tree. */
export function getIn(tree: unknown, key: string): unknown {
  let cur: any = tree
  for (const seg of key.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = cur[seg]
  }
  return cur
}

/** Sets a dotted key in a nested tree (the body of a server-config PUT). */
export function setIn(tree: Record<string, any>, key: string, value: unknown) {
  const path = key.split('.')
  let cur = tree
  for (const seg of path.slice(0, -1)) cur = cur[seg] ??= {}
  cur[path[path.length - 1]] = value
}
