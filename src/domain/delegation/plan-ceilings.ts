import {parseCeiling} from './edge-class.js'
import {POLICY_V1, policyV1Ceiling} from './policy-v1.js'

/** Permissions rule 1 adds to a V1 ceiling (an applied config that assigns a service account). */
const SA_PERMISSIONS = ['cloud_service_account.assign', 'cloud_service_account.use']

/**
 * Ceilings of one plan, interned: the few distinct ceilings a plan has are built once and
 * shared (frozen) by every hop that carries them. Each stored ceiling text is parsed once, each
 * V1 ceiling computed once per (edge role, applied role, rule 1, parent ceiling), and each
 * "above policy" verdict once per (ceiling, role, rule 1): a plan over 100k adopted edges sees a
 * handful of each.
 */
export function ceilingCache() {
  const interned = new Map<string, readonly string[]>()
  const parsed = new Map<string, readonly string[] | null>()
  // Keyed by nested maps (no key string built per hop): parent ceiling → edge role → applied role → rule 1.
  const v1 = new Map<readonly string[] | null, Map<string, Map<string, Pair<readonly string[] | null>>>>()
  const above = new Map<readonly string[], Map<string, Pair<boolean>>>()
  const intern = (c: readonly string[]): readonly string[] => {
    const key = c.join(',')
    let hit = interned.get(key)
    if (!hit) interned.set(key, (hit = Object.freeze([...c])))
    return hit
  }
  return {
    /** `parseCeiling`, remembered per text; the array it gives is interned. */
    parse(raw: string | null): string[] | null {
      if (raw === null) return null
      let hit = parsed.get(raw)
      if (hit === undefined) {
        const c = parseCeiling(raw)
        parsed.set(raw, (hit = c && intern(c)))
      }
      return hit as string[] | null
    },
    policy(edgeRole: string, appliedRole: string, sa: boolean, parent: readonly string[] | null): readonly string[] | null {
      const bySa = within(within(within(v1, parent, newMap), edgeRole, newMap), appliedRole, newPair)
      const i = sa ? 1 : 0
      if (bySa[i] === undefined) {
        const c = policyV1Ceiling({edgeRole, appliedRole, assignModeServiceAccount: sa, parentCeiling: parent})
        bySa[i] = c && intern(c)
      }
      return bySa[i]!
    },
    /** A recognized ceiling holds IDs beyond the V1 row of the edge's role (plus rule 1 when the config has it). */
    abovePolicy(ceiling: readonly string[], edgeRole: string, sa: boolean): boolean {
      const bySa = within(within(above, ceiling, newMap), edgeRole, newPair)
      const i = sa ? 1 : 0
      if (bySa[i] === undefined) {
        const row = POLICY_V1[edgeRole] ?? []
        bySa[i] = ceiling.some((p) => !row.includes(p) && !(sa && SA_PERMISSIONS.includes(p)))
      }
      return bySa[i]!
    },
  }
}

/** Results for rule 1 off and on, each computed on first use. */
type Pair<T> = [T | undefined, T | undefined]
const newPair = <T>(): Pair<T> => [undefined, undefined]
const newMap = <K, V>() => new Map<K, V>()
/** The value under `key`, made and stored on first use. */
export function within<K, V>(map: Map<K, V>, key: K, make: () => NoInfer<V>): V {
  let v = map.get(key)
  if (v === undefined) map.set(key, (v = make()))
  return v
}
export type Ceilings = ReturnType<typeof ceilingCache>
