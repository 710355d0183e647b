import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {manifestText, MANIFEST_FILE} from '../../scripts/manifest.mjs'
import {COMMANDS} from '../../src/cli/commands.js'
// @ts-expect-error: a build script in plain JavaScript (no declarations)
import {readRegistry} from '../../scripts/dev-lazy-registry.mjs'

const cliDoc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8')
const words = (id: string) => id.replace(/:/g, ' ')

interface CachedFlag {
  type: 'boolean' | 'option'
  char?: string
  required?: boolean
  multiple?: boolean
  exclusive?: string[]
  helpGroup?: string
}
interface CachedCommand {
  args: Record<string, {required?: boolean}>
  flags: Record<string, CachedFlag>
}

/**
 * `svc project list` in backticks; the last word may sit in an alternation such as
 * `svc agent stop\|start\|restart AGENT`.
 */
function documentedPattern(id: string): RegExp {
  const parts = words(id).split(' ')
  const last = parts.pop()!
  const alt = String.raw`(?:[a-z][\w-]*\\\|)*` + last + String.raw`(?:\\\|[a-z][\w-]*)*`
  return new RegExp('`svc ' + [...parts, ''].join(' ') + alt + '[ `]')
}

describe('the command registry and docs/cli.md', () => {
  it('the pattern accepts plain and alternation forms', () => {
    expect('`svc agent stop\\|start\\|restart AGENT`').toMatch(documentedPattern('agent:start'))
    expect('`svc project list`').toMatch(documentedPattern('project:list'))
    expect('`svc project listing`').not.toMatch(documentedPattern('project:list'))
  })

  it.each(Object.keys(COMMANDS))('svc %s is documented in docs/cli.md', (id) => {
    expect(cliDoc).toMatch(documentedPattern(id))
  })
})

describe('oclif.manifest.json', () => {
  const committed = JSON.parse(readFileSync(MANIFEST_FILE, 'utf8')) as {version: string; commands: Record<string, CachedCommand>}

  it('lists exactly the commands of the registry', () => {
    expect(Object.keys(committed.commands).sort()).toEqual(Object.keys(COMMANDS).sort())
  })

  it('is what oclif computes from the current bundle (run `npm run build` when this fails)', async () => {
    expect(JSON.parse(await manifestText())).toEqual(committed)
    // oclif loads every command to compute it: seconds of CPU, tens of seconds on a busy machine.
  }, 120_000)

  it('carries the package version (oclif ignores it otherwise)', () => {
    const pjson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string}
    expect(committed.version).toBe(pjson.version)
  })

  it('every command takes --json', () => {
    for (const [id, cmd] of Object.entries(committed.commands)) expect(cmd.flags.json?.type, id).toBe('boolean')
  })

  // A change to a command's flags or arguments is a change of the CLI contract: review the snapshot.
  it.each(Object.keys(COMMANDS))('flags and arguments of svc %s', (id) => {
    const cmd = committed.commands[id]
    const flags = Object.fromEntries(
      Object.entries(cmd.flags)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, f]) => [
          name,
          [f.type, f.char && `-${f.char}`, f.required && 'required', f.multiple && 'multiple', f.exclusive?.length && `exclusive:${f.exclusive.join(',')}`].filter(Boolean).join(' '),
        ]),
    )
    const args = Object.entries(cmd.args).map(([name, a]) => (a.required ? name.toUpperCase() : `[${name.toUpperCase()}]`))
    expect({args, flags}).toMatchSnapshot()
  })
})

// Both bundles rewrite src/cli/commands.ts into a lazy registry from what readRegistry reads of
// its text (scripts/dev-lazy-registry.mjs, used by scripts/build-binary.mjs too): it must read
// exactly the registry TypeScript evaluates, each id naming the module of the class COMMANDS holds.
describe('the command registry as the builds read it', () => {
  const source = new URL('../../src/cli/commands.ts', import.meta.url)
  const entries = readRegistry(readFileSync(source, 'utf8')) as Array<{id: string; from: string}>

  it('has every id of COMMANDS, in order, and no other', () => {
    expect(entries.map((e) => e.id)).toEqual(Object.keys(COMMANDS))
  })

  it('names, for each id, the module of the class COMMANDS holds', async () => {
    for (const {id, from} of entries) {
      const mod = (await import(new URL(from.replace(/\.js$/, '.ts'), source).href)) as {default: unknown}
      expect(mod.default, id).toBe((COMMANDS as Record<string, unknown>)[id])
    }
  })

  it('refuses a registry it cannot read whole', () => {
    const text = readFileSync(source, 'utf8').replace(/^(\s*)('[^']+'|\w+): (\w+),$/m, '$1$2: $3, // moved')
    expect(() => readRegistry(text)).toThrow(/could not read every COMMANDS entry/)
  })
})
