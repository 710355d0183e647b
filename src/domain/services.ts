import type {FastifyInstance} from 'fastify'
import {createAccessTokens, type AccessTokens} from './auth/access-tokens.js'
import {createCredentialResolver, type Authenticate} from './auth/credentials.js'
import {createSessions, type Sessions} from './auth/sessions.js'
import {createSignIn, type SignIn} from './auth/sign-in.js'
import type {Deps} from './deps.js'
import {createProjectsService, type ProjectsService} from './projects/projects-service.js'
import {createUsersService, type UsersService} from './users/users-service.js'

/** Every domain service of one Hub, built once in the composition root. */
export interface Services {
  authenticate: Authenticate
  users: UsersService
  projects: ProjectsService
  accessTokens: AccessTokens
  sessions: Sessions
  /** Interactive sign-in with OpenID Connect (web, CLI loopback, device). */
  signIn: SignIn
  ping: () => Promise<void>
  /** Route sets that capabilities add (sign-in, agents, ...), registered after the core ones. */
  routePlugins: Array<(app: FastifyInstance) => Promise<void> | void>
}

export function createServices(deps: Deps): Services {
  const users = createUsersService(deps)
  const sessions = createSessions(deps)
  return {
    authenticate: createCredentialResolver(deps),
    users,
    projects: createProjectsService(deps),
    accessTokens: createAccessTokens(deps),
    sessions,
    signIn: createSignIn(deps, {users, sessions}),
    ping: () => deps.store.ping(),
    routePlugins: [],
  }
}
