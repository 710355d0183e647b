import {Flags} from '@oclif/core'
import {BaseCommand} from '../../../src/cli/base-command.js'
import type {AdoptionStatusDto} from '../../../src/api/dto.js'
import {ADOPTION_ROUTE, countsText, hopsTable, hubFlag} from '../../../src/cli/adoption-render.js'
import {fields, table} from '../../../src/cli/render.js'
import {EXCLUSION_REASONS, RECORD_STATUSES, SKIP_REASONS} from '../../../src/domain/delegation/types.js'

type AdoptionStatus = AdoptionStatusDto

export default class AdminAdoptionStatus extends BaseCommand<AdoptionStatus> {
  static override description = `Show the delegation provenance adoption status (admin).

The start-up snapshot and marker, record counts by status and reason, a page of adoption records, and the adoptable unrecorded hops no record covers (not in the cohort).`
  static override examples = ['<%= config.bin %> admin adoption status', '<%= config.bin %> admin adoption status --status skipped_changed --reason edge_changed', '<%= config.bin %> admin adoption status --project my-project --limit 50 --offset 50']
  static override flags = {
    status: Flags.string({description: `Only records with this status: ${RECORD_STATUSES.join(', ')}.`, options: [...RECORD_STATUSES], helpValue: '<status>'}),
    reason: Flags.string({description: 'Only records with this reason: an exclusion reason, or why a start-up pass skipped the hop (an unknown one is refused with the list).', options: [...EXCLUSION_REASONS, ...SKIP_REASONS], helpValue: '<reason>'}),
    project: Flags.string({description: 'Only records and hops of this project (default: every project).'}),
    limit: Flags.integer({description: 'Records per page (at most 500).', default: 100, min: 1, max: 500}),
    offset: Flags.integer({description: 'Records to skip.', default: 0, min: 0}),
    hub: hubFlag,
  }

  async execute(): Promise<AdoptionStatus> {
    const {flags} = await this.parse(AdminAdoptionStatus)
    const q = new URLSearchParams({limit: String(flags.limit), offset: String(flags.offset)})
    if (flags.status) q.set('status', flags.status)
    if (flags.reason) q.set('reason', flags.reason)
    if (flags.project) q.set('projectId', flags.project)
    const client = await this.client(flags.hub)
    return client.call<AdoptionStatus>('GET', `${ADOPTION_ROUTE}?${q}`)
  }

  protected override human(s: AdoptionStatus): string {
    const shown = s.records.length ? `${s.offset + 1}-${s.offset + s.records.length} of ${s.total}` : `0 of ${s.total}`
    const head = fields([
      ['Snapshot', s.cohort ? `taken ${s.cohort.takenAt} (${s.cohort.recordCount} records)` : 'not taken'],
      ['Marker', s.marker ? `retry version ${s.marker.retryVersion}, written ${s.marker.writtenAt}` : '-'],
      ['By status', countsText(s.counts.byStatus)],
      ['By reason', countsText(s.counts.byReason)],
      ['Records', shown],
    ])
    const records = s.records.length ? table(['id', 'status', 'reason', 'origin', 'agent', 'project'], s.records.map((r) => [r.id, r.status, r.reason, r.origin, r.delegateAgentId, r.projectId])) : '(no records)'
    const hint = s.notInCohort.length ? `\n\nAdopt them: svc admin adoption preview --out plan.json, then svc admin adoption commit --plan plan.json` : ''
    return `${head}\n\n${records}\n\nNot in cohort: ${s.notInCohort.length} adoptable hop(s)${s.notInCohort.length ? `\n${hopsTable(s.notInCohort, 'adopt')}` : ''}${hint}`
  }
}
