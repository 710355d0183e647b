import {pathKey, type SettingsIssue} from './settings-issues.js'

type Tree = Record<string, unknown>
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface RequiredSecret {
  key: string
  description?: string
  type: 'environment' | 'variable' | 'file'
  target?: string
}

/** The active profile with its runtime, defaults and harness configurations resolved. */
export interface ResolvedProfile {
  name: string
  runtime: {name: string; type?: string; host?: string; context?: string; namespace?: string; sync?: string; gke: boolean; env: Record<string, string>}
  /** The profile's default template, else the top-level one. */
  defaultTemplate: string | null
  defaultHarnessConfig: string | null
  /** The profile's registry, else the top-level `image_registry`. */
  imageRegistry: string | null
  /** Every harness configuration with the profile's `harness_overrides` applied (field by field). */
  harnessConfigs: Record<string, Tree>
  secrets: RequiredSecret[]
}

type Where = (path: string[]) => {file: string | null; line: number; column: number; variable?: string}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/**
 * Checks the cross-references of a merged tree (every profile's `runtime` names a runtime;
 * `active_profile` names a profile; overrides name harness configurations) and resolves the
 * active profile: `active_profile`, else a profile named `default`, else none.
 */
export function resolveProfile(tree: Tree, where: Where): {profile: ResolvedProfile | null; issues: SettingsIssue[]} {
  const issues: SettingsIssue[] = []
  const runtimes = isObj(tree.runtimes) ? tree.runtimes : {}
  const profiles = isObj(tree.profiles) ? tree.profiles : {}
  const harnessConfigs = isObj(tree.harness_configs) ? tree.harness_configs : {}
  const issue = (severity: SettingsIssue['severity'], path: string[], message: string) => issues.push({severity, ...where(path), key: pathKey(path), message})

  for (const [name, p] of Object.entries(profiles)) {
    if (!isObj(p)) continue
    const rt = p.runtime
    if (typeof rt === 'string' && !(rt in runtimes)) {
      const known = Object.keys(runtimes)
      issue('error', ['profiles', name, 'runtime'], `expected the name of a runtime (${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'none is defined under runtimes'}), found ${JSON.stringify(rt)}`)
    }
    if (isObj(p.harness_overrides)) {
      for (const hc of Object.keys(p.harness_overrides)) {
        if (!(hc in harnessConfigs)) issue('warning', ['profiles', name, 'harness_overrides', hc], 'overrides a harness configuration that is not defined under harness_configs')
      }
    }
  }

  const requested = str(tree.active_profile)
  if (requested && !(requested in profiles)) {
    const known = Object.keys(profiles)
    issue('error', ['active_profile'], `expected the name of a profile (${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'none is defined under profiles'}), found ${JSON.stringify(requested)}`)
    return {profile: null, issues}
  }
  const name = requested ?? ('default' in profiles ? 'default' : null)
  if (!name || !isObj(profiles[name])) return {profile: null, issues}
  const p = profiles[name] as Tree
  const runtimeName = str(p.runtime)
  if (!runtimeName || !isObj(runtimes[runtimeName])) return {profile: null, issues}
  const rt = runtimes[runtimeName] as Tree
  const envOf = (v: unknown) => (isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : {})

  const configs: Record<string, Tree> = {}
  const overrides = isObj(p.harness_overrides) ? p.harness_overrides : {}
  for (const [hc, cfg] of Object.entries(harnessConfigs)) {
    if (!isObj(cfg)) continue
    const o = isObj(overrides[hc]) ? (overrides[hc] as Tree) : {}
    const merged: Tree = {...cfg, ...o}
    if (isObj(cfg.env) || isObj(o.env)) merged.env = {...envOf(cfg.env), ...envOf(o.env)}
    configs[hc] = merged
  }
  const secrets = secretsOf(p.secrets)
  for (const cfg of Object.values(configs)) if (Array.isArray(cfg.secrets)) cfg.secrets = secretsOf(cfg.secrets)
  return {
    issues,
    profile: {
      name,
      runtime: {
        name: runtimeName,
        ...(Object.fromEntries(['type', 'host', 'context', 'namespace', 'sync'].filter((k) => str(rt[k])).map((k) => [k, rt[k] as string])) as Record<string, string>),
        gke: rt.gke === true,
        env: {...envOf(rt.env), ...envOf(p.env)},
      },
      defaultTemplate: str(p.default_template) ?? str(tree.default_template),
      defaultHarnessConfig: str(p.default_harness_config) ?? str(tree.default_harness_config),
      imageRegistry: str(p.image_registry) ?? str(tree.image_registry),
      harnessConfigs: configs,
      secrets,
    },
  }
}

/** Required secret entries with their default type filled in. */
export function secretsOf(v: unknown): RequiredSecret[] {
  return Array.isArray(v) ? v.filter(isObj).map((s) => ({type: 'environment', ...s}) as RequiredSecret) : []
}
