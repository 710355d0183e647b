/**
 * Laying out an agent's HOME for its harness, the same for every harness: first the user's own
 * login for `credentials-file` auth (the file the auth type names, copied from the broker user's
 * HOME to the same place in the agent's, mode 0600; copied, not linked, so the agent's token
 * refreshes stay its own), then the module's own `prepare`.
 */
import {copyFile, chmod, mkdir} from 'node:fs/promises'
import {dirname, join} from 'node:path'
import {unlinkPlantedLinks} from './json-file.js'
import type {HarnessModule, LaunchContext} from './types.js'

export async function prepareHarnessHome(mod: HarnessModule, ctx: LaunchContext): Promise<void> {
  const auth = mod.auth.types[ctx.authType]
  if (auth?.credentialsFile) {
    const target = join(ctx.home, auth.credentialsFile)
    await unlinkPlantedLinks(target)
    await mkdir(dirname(target), {recursive: true, mode: 0o700})
    try {
      await copyFile(join(ctx.userHome, auth.credentialsFile), target)
      await chmod(target, 0o600)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message
      throw new Error(`${mod.displayName} credentials-file auth: cannot copy ~/${auth.credentialsFile} of the broker's user (${code}); sign in with ${auth.signIn ?? `\`${mod.executable}\``} there first`)
    }
  }
  await mod.prepare(ctx)
}
