import ArtifactGet from '../../commands/artifact/get.js'
import ArtifactPublish from '../../commands/artifact/publish.js'
import AuthLogin from '../../commands/auth/login.js'
import AuthLogout from '../../commands/auth/logout.js'
import AuthTokenCreate from '../../commands/auth/token/create.js'
import AuthTokenList from '../../commands/auth/token/list.js'
import AuthTokenRevoke from '../../commands/auth/token/revoke.js'
import ConfigGet from '../../commands/config/get.js'
import ConfigList from '../../commands/config/list.js'
import ConfigSet from '../../commands/config/set.js'
import ConfigUnset from '../../commands/config/unset.js'
import ConfigValidate from '../../commands/config/validate.js'
import Help from '../../commands/help.js'
import ProjectDelete from '../../commands/project/delete.js'
import ProjectGet from '../../commands/project/get.js'
import ProjectList from '../../commands/project/list.js'
import ProjectRegister from '../../commands/project/register.js'
import ServerStart from '../../commands/server/start.js'
import Whoami from '../../commands/whoami.js'

/**
 * The explicit command registry (oclif `strategy: explicit`). Commands stay thin and import
 * heavy modules (Fastify, database drivers) lazily inside `execute`, so listing them here
 * costs little at start-up.
 */
export const COMMANDS = {
  'artifact:get': ArtifactGet,
  'artifact:publish': ArtifactPublish,
  'auth:login': AuthLogin,
  'auth:logout': AuthLogout,
  'auth:token:create': AuthTokenCreate,
  'auth:token:list': AuthTokenList,
  'auth:token:revoke': AuthTokenRevoke,
  'config:get': ConfigGet,
  'config:list': ConfigList,
  'config:set': ConfigSet,
  'config:unset': ConfigUnset,
  'config:validate': ConfigValidate,
  help: Help,
  'project:delete': ProjectDelete,
  'project:get': ProjectGet,
  'project:list': ProjectList,
  'project:register': ProjectRegister,
  'server:start': ServerStart,
  whoami: Whoami,
}
