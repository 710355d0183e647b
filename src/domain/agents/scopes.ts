/**
 * Scopes of an agent token, fixed when the token is minted from the agent's role. Status
 * reports about itself and token refresh need no scope: every live agent may make them.
 */
export const AGENT_ROLES = ['readonly', 'baseline', 'full', 'none'] as const
export type AgentRole = (typeof AGENT_ROLES)[number]

export const SCOPE = {
  projectRead: 'project:read',
  artifactRead: 'project:artifact:read',
  artifactWrite: 'project:artifact:write',
  notify: 'agent:notify',
  lifecycle: 'ScopeAgentLifecycle',
} as const

const READONLY = [SCOPE.projectRead, SCOPE.artifactRead]
const BASELINE = [...READONLY, SCOPE.artifactWrite, SCOPE.notify]
const FULL = [...BASELINE, SCOPE.lifecycle]

export function scopesForRole(role: string): string[] {
  switch (role) {
    case 'full':
      return FULL
    case 'baseline':
      return BASELINE
    case 'readonly':
      return READONLY
    default:
      return []
  }
}
