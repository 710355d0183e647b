import {homedir} from 'node:os'
import {join} from 'node:path'

/** Per-user locations of CONTRACT.md "Names and places"; HOME decides, so tests use a temp HOME. */
export function svcHome(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.HOME || homedir(), '.svc')
}

export const paths = (env: NodeJS.ProcessEnv = process.env) => {
  const home = svcHome(env)
  return {
    home,
    globalSettings: join(home, 'settings.yaml'),
    legacyServerConfig: join(home, 'server.yaml'),
    embeddedDatabase: join(home, 'hub.db'),
    storage: join(home, 'storage'),
    devToken: join(home, 'dev-token'),
    credentials: join(home, 'credentials.json'),
  }
}
