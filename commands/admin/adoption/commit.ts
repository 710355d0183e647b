import {readFileSync} from 'node:fs'
import {Flags} from '@oclif/core'
import {AppError} from '../../../src/api/app-error.js'
import {BaseCommand} from '../../../src/cli/base-command.js'
import {ADOPTION_ROUTE, commitText, hubFlag, planFlags, planRequest, type AdoptionCommit} from '../../../src/cli/adoption-render.js'
import type {PlanFile} from './preview.js'

export default class AdminAdoptionCommit extends BaseCommand<AdoptionCommit> {
  static override description = `Commit a previewed delegation provenance adoption or revert (admin).

The Hub plans again in one transaction and writes every hop or nothing. A plan that changed since the preview is refused (stale_authorization_preview): preview again. At most 500 hops per commit.`
  static override examples = [
    '<%= config.bin %> admin adoption commit --plan plan.json',
    '<%= config.bin %> admin adoption commit --fingerprint FINGERPRINT --project my-project',
    '<%= config.bin %> admin adoption commit --fingerprint FINGERPRINT --revert RECORD_ID',
  ]
  static override flags = {
    plan: Flags.string({description: 'A plan file written by `preview --out`.'}),
    fingerprint: Flags.string({description: 'The plan fingerprint of a preview made with the same scope flags.'}),
    ...planFlags,
    hub: hubFlag,
  }

  async execute(): Promise<AdoptionCommit> {
    const {flags} = await this.parse(AdminAdoptionCommit)
    const scoped = !!(flags.project || flags.agent?.length || flags.revert?.length || flags.confirm?.length)
    let body: Record<string, unknown>
    if (flags.plan) {
      if (flags.fingerprint || scoped) throw new AppError('usage_error', '--plan carries the plan: pass no --fingerprint or scope flags with it')
      let plan: PlanFile
      try {
        plan = JSON.parse(readFileSync(flags.plan, 'utf8')) as PlanFile
      } catch (err) {
        throw new AppError('usage_error', `cannot read plan file ${flags.plan}: ${(err as Error).message}`)
      }
      if (!plan?.request?.operation || typeof plan.preview?.planFingerprint !== 'string') throw new AppError('usage_error', `${flags.plan} is not a plan file written by \`svc admin adoption preview --out\``)
      body = {...plan.request, planFingerprint: plan.preview.planFingerprint, planId: plan.preview.planId}
    } else if (flags.fingerprint) {
      body = {...planRequest(flags), planFingerprint: flags.fingerprint}
    } else {
      throw new AppError('usage_error', 'pass --plan FILE (from `preview --out`) or --fingerprint with the preview\'s scope flags')
    }
    const client = await this.client(flags.hub)
    return client.call<AdoptionCommit>('POST', `${ADOPTION_ROUTE}/commits`, body)
  }

  protected override human(c: AdoptionCommit): string {
    return commitText(c)
  }
}
