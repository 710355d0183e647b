/** Kubernetes-style quantities (`2Gi`, `500m`, `1.5`) converted for container CLIs. */

const BIN: Record<string, number> = {Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50}
const DEC: Record<string, number> = {'': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15}

/** Bytes of a memory or disk quantity (`2Gi` = 2147483648, `2G` = 2000000000). */
export function quantityBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|K|M|G|T|P)?$/.exec(q.trim())
  if (!m) throw new Error(`${JSON.stringify(q)} is not a size: use a number with an optional unit such as 512Mi, 2Gi or 2G`)
  const unit = m[2] ?? ''
  return Math.round(Number(m[1]) * (BIN[unit] ?? DEC[unit]))
}

/** CPUs as a decimal (`500m` → 0.5, `2` → 2). */
export function cpuCores(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m)?$/.exec(q.trim())
  if (!m) throw new Error(`${JSON.stringify(q)} is not a CPU amount: use cores (1, 0.5) or millicores (500m)`)
  const v = m[2] ? Number(m[1]) / 1000 : Number(m[1])
  if (v <= 0) throw new Error(`CPU amount ${JSON.stringify(q)} must be more than zero`)
  return v
}
