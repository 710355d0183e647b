/**
 * The command ids argv may run: the longest run of its leading words (`agent create x`, or
 * `agent:create x`) that is a command, and for `help <words>` that one too; undefined when argv
 * names no command (root help, an unknown word, a flag first), for which every class is loaded.
 */
export function commandIdsOf(argv: string[], ids: readonly string[]): string[] | undefined {
  const words: string[] = []
  for (const a of argv) {
    if (a.startsWith('-')) break
    words.push(...a.split(':'))
  }
  const known = new Set(ids)
  const longest = (w: string[]) => {
    for (let n = w.length; n > 0; n--) if (known.has(w.slice(0, n).join(':'))) return w.slice(0, n).join(':')
    return undefined
  }
  const id = longest(words)
  if (!id) return undefined
  if (id !== 'help') return [id]
  const target = longest(words.slice(1))
  return words.length > 1 && !target ? undefined : ['help', ...(target ? [target] : [])]
}
