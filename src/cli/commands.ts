import AdminAdoptionCommit from '../../commands/admin/adoption/commit.js'
import AdminAdoptionPreview from '../../commands/admin/adoption/preview.js'
import AdminAdoptionStatus from '../../commands/admin/adoption/status.js'
import AdminMaintenance from '../../commands/admin/maintenance.js'
import AdminProfiling from '../../commands/admin/profiling.js'
import AdminUserRole from '../../commands/admin/user/role.js'
import AgentApprove from '../../commands/agent/approve.js'
import AgentAttach from '../../commands/agent/attach.js'
import AgentForward from '../../commands/agent/forward.js'
import Approvals from '../../commands/approvals.js'
import AgentCompare from '../../commands/agent/compare.js'
import AgentCreate from '../../commands/agent/create.js'
import AgentDelete from '../../commands/agent/delete.js'
import AgentDiff from '../../commands/agent/diff.js'
import AgentGet from '../../commands/agent/get.js'
import AgentTreeCommand from '../../commands/agent/tree.js'
import AgentList from '../../commands/agent/list.js'
import AgentLogs from '../../commands/agent/logs.js'
import AgentMerge from '../../commands/agent/merge.js'
import AgentPick from '../../commands/agent/pick.js'
import AgentPush from '../../commands/agent/push.js'
import AgentReincarnate from '../../commands/agent/reincarnate.js'
import AgentRestart from '../../commands/agent/restart.js'
import AgentStart from '../../commands/agent/start.js'
import AgentStop from '../../commands/agent/stop.js'
import AgentWait from '../../commands/agent/wait.js'
import ArtifactGet from '../../commands/artifact/get.js'
import ArtifactPublish from '../../commands/artifact/publish.js'
import AuthLogin from '../../commands/auth/login.js'
import AuthLogout from '../../commands/auth/logout.js'
import AuthTokenCreate from '../../commands/auth/token/create.js'
import AuthTokenList from '../../commands/auth/token/list.js'
import AuthTokenRevoke from '../../commands/auth/token/revoke.js'
import BrokerGet from '../../commands/broker/get.js'
import BrokerList from '../../commands/broker/list.js'
import BrokerRegister from '../../commands/broker/register.js'
import BrokerStart from '../../commands/broker/start.js'
import ImageBuild from '../../commands/image/build.js'
import ConfigGet from '../../commands/config/get.js'
import ConfigList from '../../commands/config/list.js'
import ConfigSet from '../../commands/config/set.js'
import ConfigUnset from '../../commands/config/unset.js'
import ConfigValidate from '../../commands/config/validate.js'
import Help from '../../commands/help.js'
import Keys from '../../commands/keys.js'
import Mcp from '../../commands/mcp.js'
import Message from '../../commands/message.js'
import ProjectDelete from '../../commands/project/delete.js'
import ProjectGet from '../../commands/project/get.js'
import ProjectList from '../../commands/project/list.js'
import ProjectRegister from '../../commands/project/register.js'
import ProjectSettingsGet from '../../commands/project/settings/get.js'
import ProjectSettingsSet from '../../commands/project/settings/set.js'
import ProjectSettingsUnset from '../../commands/project/settings/unset.js'
import ServerStart from '../../commands/server/start.js'
import SettingsGet from '../../commands/settings/get.js'
import SettingsReset from '../../commands/settings/reset.js'
import SettingsSet from '../../commands/settings/set.js'
import Status from '../../commands/status.js'
import TemplateList from '../../commands/template/list.js'
import TemplateUpload from '../../commands/template/upload.js'
import Web from '../../commands/web.js'
import Whoami from '../../commands/whoami.js'

/**
 * The explicit command registry (oclif `strategy: explicit`). Commands stay thin and import
 * heavy modules (Fastify, database drivers) lazily inside `execute`, so listing them here
 * costs little at start-up.
 */
export const COMMANDS = {
  'admin:adoption:commit': AdminAdoptionCommit,
  'admin:adoption:preview': AdminAdoptionPreview,
  'admin:adoption:status': AdminAdoptionStatus,
  'admin:maintenance': AdminMaintenance,
  'admin:profiling': AdminProfiling,
  'admin:user:role': AdminUserRole,
  'agent:approve': AgentApprove,
  'agent:attach': AgentAttach,
  approvals: Approvals,
  'agent:compare': AgentCompare,
  'agent:create': AgentCreate,
  'agent:delete': AgentDelete,
  'agent:diff': AgentDiff,
  'agent:forward': AgentForward,
  'agent:get': AgentGet,
  'agent:list': AgentList,
  'agent:logs': AgentLogs,
  'agent:merge': AgentMerge,
  'agent:pick': AgentPick,
  'agent:push': AgentPush,
  'agent:reincarnate': AgentReincarnate,
  'agent:restart': AgentRestart,
  'agent:start': AgentStart,
  'agent:stop': AgentStop,
  'agent:tree': AgentTreeCommand,
  'agent:wait': AgentWait,
  'artifact:get': ArtifactGet,
  'artifact:publish': ArtifactPublish,
  'auth:login': AuthLogin,
  'auth:logout': AuthLogout,
  'auth:token:create': AuthTokenCreate,
  'auth:token:list': AuthTokenList,
  'auth:token:revoke': AuthTokenRevoke,
  'broker:get': BrokerGet,
  'broker:list': BrokerList,
  'broker:register': BrokerRegister,
  'broker:start': BrokerStart,
  'image:build': ImageBuild,
  'config:get': ConfigGet,
  'config:list': ConfigList,
  'config:set': ConfigSet,
  'config:unset': ConfigUnset,
  'config:validate': ConfigValidate,
  help: Help,
  keys: Keys,
  mcp: Mcp,
  message: Message,
  'project:delete': ProjectDelete,
  'project:get': ProjectGet,
  'project:list': ProjectList,
  'project:register': ProjectRegister,
  'project:settings:get': ProjectSettingsGet,
  'project:settings:set': ProjectSettingsSet,
  'project:settings:unset': ProjectSettingsUnset,
  'server:start': ServerStart,
  'settings:get': SettingsGet,
  'settings:reset': SettingsReset,
  'settings:set': SettingsSet,
  status: Status,
  'template:list': TemplateList,
  'template:upload': TemplateUpload,
  web: Web,
  whoami: Whoami,
}
