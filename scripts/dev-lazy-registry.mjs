// The dev bundle's command registry (dist/cli.js) made lazy, for `npm run build`
// (scripts/build.mjs). src/cli/commands.ts imports every command class; bundled as it is, every
// `svc` start compiles and evaluates all ~60 commands and what they import (a fifth of the
// bundle; `svc agent create` spent ~150 ms of CPU where ~120 is what it needs). Here the file is
// rewritten at build time into the same COMMANDS object, every id a key, whose classes are
// imported by `import()` (each command its own chunk) when src/cli/entry.ts asks for them
// before oclif runs: the one argv names, or all of them when argv names none it knows.
// The executable has its own rewrite (scripts/build-binary.mjs, CommonJS getters); the source
// file stays the one list, and vitest imports it as it is.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

/** The symbol under which the lazy COMMANDS carries its loader (read by src/cli/entry.ts). */
export const LOAD_SYMBOL = 'svc.loadCommands'

/**
 * The registry's entries as `{id, from}`, read from its two regular parts (`import X from '...'`
 * lines and `'id': X,` entries); throws when a line cannot be accounted for, so a registry
 * written another way fails the build instead of losing commands.
 */
export function readRegistry(text) {
  const imports = new Map([...text.matchAll(/^import (\w+) from '([^']+)'$/gm)].map((m) => [m[1], m[2]]))
  const body = /export const COMMANDS = \{([\s\S]*?)\n\}/.exec(text)?.[1]
  if (!body) throw new Error('build: no `export const COMMANDS = {...}` in src/cli/commands.ts')
  const entries = [...body.matchAll(/^\s*(?:'([^']+)'|([\w]+)): (\w+),?$/gm)].map((m) => ({id: m[1] ?? m[2], ident: m[3]}))
  const lines = body.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'))
  if (entries.length !== lines.length) throw new Error(`build: could not read every COMMANDS entry of src/cli/commands.ts (${entries.length} of ${lines.length} lines)`)
  return entries.map(({id, ident}) => {
    const from = imports.get(ident)
    if (!from) throw new Error(`build: COMMANDS entry ${id} names ${ident}, which src/cli/commands.ts does not import`)
    return {id, from}
  })
}

function lazyRegistry(text) {
  const entries = readRegistry(text)
  const loaders = entries.map(({id, from}) => `  ${JSON.stringify(id)}: () => import(${JSON.stringify(from)}),`)
  return `const LOADERS = {
${loaders.join('\n')}
}
// Every id is a key from the start (listing, suggestions); a class is there once loaded.
const COMMANDS = Object.fromEntries(Object.keys(LOADERS).map((id) => [id, undefined]))
Object.defineProperty(COMMANDS, Symbol.for(${JSON.stringify(LOAD_SYMBOL)}), {
  value: async (ids = Object.keys(LOADERS)) => {
    await Promise.all(ids.filter((id) => LOADERS[id] && !COMMANDS[id]).map(async (id) => {
      COMMANDS[id] = (await LOADERS[id]()).default
    }))
  },
})
export {COMMANDS}
`
}

export const devLazyRegistryPlugin = {
  name: 'svc-dev-lazy-registry',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]cli[\\/]commands\.ts$/}, (args) => ({contents: lazyRegistry(readFileSync(args.path, 'utf8')), loader: 'js', resolveDir: join(args.path, '..')}))
  },
}
