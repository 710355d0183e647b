import {Flags} from '@oclif/core'
import {AppError} from '../api/app-error.js'
import type {AdoptionCommitDto, AdoptionHopDto, AdoptionPreviewDto} from '../api/dto.js'
import {fields, table} from './render.js'

/** The CLI reads the wire shapes of src/api/dto.ts. */
export type AdoptionHop = AdoptionHopDto
export type AdoptionPreview = AdoptionPreviewDto
export type AdoptionCommit = AdoptionCommitDto

export type PlanRequest = {operation: 'adopt'; scope: {projectId?: string; agentIds?: string[]}} | {operation: 'revert'; recordIds: string[]; confirmOriginalEdgeIds?: Record<string, string>}

export const ADOPTION_ROUTE = '/api/v1/admin/delegation-adoption'

export const hubFlag = Flags.string({description: 'Hub URL (default: SVC_HUB_ENDPOINT, settings hub.endpoint, http://127.0.0.1:9810).'})

/** Scope flags shared by `preview` and `commit --fingerprint`. */
export const planFlags = {
  project: Flags.string({description: 'Adopt: plan the live agents of this project only (default: every live agent).'}),
  agent: Flags.string({description: 'Adopt: plan these agents and their ancestors only (repeat for several).', multiple: true}),
  revert: Flags.string({description: 'Revert the adoption records with these IDs instead of adopting (repeat for several).', multiple: true}),
  confirm: Flags.string({description: 'Revert: RECORD=EDGE picks the original edge to restore when records disagree (repeat for several).', multiple: true}),
}

/** The request body a preview (and its commit) sends, from the scope flags. */
export function planRequest(f: {project?: string; agent?: string[]; revert?: string[]; confirm?: string[]}): PlanRequest {
  if (f.revert?.length) {
    if (f.project || f.agent?.length) throw new AppError('usage_error', '--revert cannot be combined with --project or --agent')
    const confirm: Record<string, string> = {}
    for (const c of f.confirm ?? []) {
      const m = /^([^=]+)=(.+)$/.exec(c)
      if (!m) throw new AppError('usage_error', `--confirm takes RECORD=EDGE, got "${c}"`)
      confirm[m[1]] = m[2]
    }
    return {operation: 'revert', recordIds: f.revert, ...(Object.keys(confirm).length && {confirmOriginalEdgeIds: confirm})}
  }
  if (f.confirm?.length) throw new AppError('usage_error', '--confirm applies to --revert only')
  return {operation: 'adopt', scope: {...(f.project && {projectId: f.project}), ...(f.agent?.length && {agentIds: f.agent})}}
}

/** `adopt 2, recorded 1`, keys sorted; `-` when empty. */
export const countsText = (c: Record<string, number>) =>
  Object.keys(c)
    .sort()
    .map((k) => `${k} ${c[k]}`)
    .join(', ') || '-'

const ceilingText = (c: string[] | null) => (c === null ? '-' : `${c.length} permissions`)
const who = (d: {kind: string; id: string} | null) => (d ? `${d.kind}:${d.id}` : '-')

export function hopsTable(hops: AdoptionHop[], operation: 'adopt' | 'revert'): string {
  if (hops.length === 0) return '(no hops)'
  if (operation === 'revert') {
    return table(['record', 'agent', 'adopted edge', 'original edge', 'outcome', 'reason', 'covered'], hops.map((h) => [h.recordId, h.agentId, h.edgeId, h.originalEdgeId, h.outcome, h.reason, h.coveredRecordIds?.length ? h.coveredRecordIds.join(',') : '-']))
  }
  return table(['agent', 'edge', 'outcome', 'reason', 'delegator', 'role', 'before', 'after'], hops.map((h) => [h.agentId, h.edgeId, h.outcome, h.reason, who(h.delegator), h.role, ceilingText(h.beforeCeiling), ceilingText(h.afterCeiling)]))
}

export function previewText(p: AdoptionPreview): string {
  const head = fields([
    ['Plan', p.planId],
    ['Operation', p.operation],
    ['Fingerprint', p.planFingerprint],
    ['Hops', `${p.hops.length} (${countsText(p.counts)})`],
    ['Covered records', p.coveredRecordIds.length ? p.coveredRecordIds.join(', ') : '-'],
  ])
  return `${head}\n\n${hopsTable(p.hops, p.operation)}`
}

export function commitText(c: AdoptionCommit): string {
  return fields([
    ['Plan', c.planId],
    ['Hops written', c.hops],
    ['Covered records', c.coveredRecords],
    ['Records', c.recordIds.join(', ')],
  ])
}
