import {writeFileSync} from 'node:fs'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {ADOPTION_ROUTE, hubFlag, planFlags, planRequest, previewText, type AdoptionPreview, type PlanRequest} from '../../../src/cli/adoption-render.js'
import {Flags} from '@oclif/core'

/** What `--out` writes: the request and the preview, so `commit --plan` sends the same plan. */
export interface PlanFile {
  request: PlanRequest
  preview: AdoptionPreview
}

export default class AdminAdoptionPreview extends BaseCommand<AdoptionPreview> {
  static override description = `Preview a delegation provenance adoption or revert (admin); writes nothing.

Without --revert it plans adoption of the unrecorded hops on live chains (every live agent, or --project / --agent). With --revert it plans the revert of adoption records. Review the hops, then commit the same plan with \`svc admin adoption commit --plan FILE\` (after --out FILE) or --fingerprint.`
  static override examples = [
    '<%= config.bin %> admin adoption preview --project my-project --out plan.json',
    '<%= config.bin %> admin adoption preview --agent AGENT_ID --agent OTHER_ID',
    '<%= config.bin %> admin adoption preview --revert RECORD_ID --out revert.json',
  ]
  static override flags = {
    ...planFlags,
    out: Flags.string({description: 'Write the plan (request and preview) to this file for `commit --plan`.'}),
    hub: hubFlag,
  }

  async execute(): Promise<AdoptionPreview> {
    const {flags} = await this.parse(AdminAdoptionPreview)
    const request = planRequest(flags)
    const client = await this.client(flags.hub)
    const preview = await client.call<AdoptionPreview>('POST', `${ADOPTION_ROUTE}/previews`, request)
    if (flags.out) writeFileSync(flags.out, JSON.stringify({request, preview} satisfies PlanFile, null, 2) + '\n')
    this.outFile = flags.out
    return preview
  }

  private outFile?: string

  protected override human(p: AdoptionPreview): string {
    // A commit of a plan that writes nothing is refused (422 empty_plan): do not suggest one.
    const writes = p.hops.some((h) => h.outcome === (p.operation === 'adopt' ? 'adopt' : 'revert'))
    if (!writes) return `${previewText(p)}\n\nThe plan writes nothing: there is nothing to commit.${this.outFile ? ` (Plan written to ${this.outFile}.)` : ''}`
    const next = this.outFile ? `\n\nPlan written to ${this.outFile}; commit it with: svc admin adoption commit --plan ${this.outFile}` : `\n\nCommit it with: svc admin adoption commit --fingerprint ${p.planFingerprint} (and the same flags)`
    return previewText(p) + next
  }
}
