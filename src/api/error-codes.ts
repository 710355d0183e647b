/**
 * The one error catalogue. Every error the Hub or the CLI reports has a code here with its
 * HTTP status and a description; docs/errors.md is checked against this table by a test.
 */
export interface ErrorCodeInfo {
  status: number
  description: string
}

export const ERROR_CODES = {
  // Generic request errors
  validation_error: {status: 400, description: 'The request body, query or parameters failed schema validation; `details.fields` lists each failing field as `{path, message}` (a value outside a fixed set says `must be one of: ...` with the values).'},
  invalid_request: {status: 400, description: 'The request is malformed (for example an empty body where one is required).'},
  unauthorized: {status: 401, description: 'No credential, or a credential that is unknown, expired or revoked.'},
  forbidden: {status: 403, description: 'The caller is authenticated but may not do this.'},
  user_suspended: {status: 403, description: 'The user behind the credential is suspended.'},
  not_found: {status: 404, description: 'The route or the resource does not exist, or the caller may not see it.'},
  conflict: {status: 409, description: 'The request conflicts with the current state of the resource.'},
  project_exists: {status: 409, description: 'A project is already registered for this git remote and the caller is not a member of it.'},
  payload_too_large: {status: 413, description: 'The request body is larger than the Hub accepts.'},
  unsupported_media_type: {status: 415, description: 'The request body has a content type the route does not accept.'},
  method_not_allowed: {status: 405, description: 'The HTTP method is not one the Hub understands (a method it knows but a route lacks is 404 `not_found`).'},
  request_timeout: {status: 408, description: 'The request (headers or body) did not arrive within the Hub\'s request timeout; the connection is closed.'},
  uri_too_long: {status: 414, description: 'The request line or a path parameter is longer than the Hub accepts.'},
  headers_too_large: {status: 431, description: 'The request headers are larger than the Hub accepts.'},
  quota_exceeded: {status: 429, description: 'A rate or quota cap was reached.'},
  budget_exceeded: {status: 429, description: 'Teams: the create would pass `limits.maxChildren` of the new agent\'s parent or `limits.maxDepth` of one of its ancestors. `details.limit` names the limit (`maxChildren` or `maxDepth`), `details.agent` the agent holding it (`{id, name}`), `details.value` its value. Nothing was made.'},
  internal_error: {status: 500, description: 'An unexpected error on the Hub; the message never carries internals, the request ID finds the log line.'},
  not_ready: {status: 503, description: 'The Hub cannot reach its database: from `GET /readyz`, and from any request that needed a database connection that could not be opened (refused, no answer, PostgreSQL starting up or out of connections); send it again once `/readyz` answers 200, or to another replica.'},
  system_maintenance: {status: 503, description: 'The Hub is in maintenance mode and refuses this request.'},

  // Sign-in
  oidc_unconfigured: {status: 503, description: 'Interactive sign-in needs `server.auth.oidc` to be configured on this Hub.'},
  oidc_failed: {status: 502, description: 'The OpenID provider refused or failed the sign-in.'},
  login_expired: {status: 400, description: 'The sign-in attempt expired or was already used; start again.'},
  authorization_pending: {status: 428, description: 'Device sign-in: the user has not finished in the browser yet; poll again.'},
  access_denied: {status: 403, description: 'The user declined the sign-in at the OpenID provider.'},
  slow_down: {status: 429, description: 'Device sign-in: polling too often; `details.interval` is the number of seconds to wait between polls.'},
  invalid_verifier: {status: 400, description: 'CLI sign-in: the PKCE verifier does not match the challenge the sign-in began with; the one-time code is spent.'},
  device_flow_unsupported: {status: 501, description: 'Device sign-in: the OpenID provider of this Hub offers no device authorization endpoint; sign in with a browser.'},

  // Artifacts
  sha256_mismatch: {status: 400, description: 'The uploaded artifact bytes do not match the `X-Content-SHA256` header (or, in the CLI, a downloaded file does not match its recorded SHA-256); nothing was stored or written.'},
  file_too_large: {status: 413, description: 'The artifact file exceeds `artifacts.max_file_bytes`; refused before anything is stored.'},
  artifact_storage_unconfigured: {status: 503, description: 'The Hub has no artifact storage (`server.storage.provider` is `none`, or `s3` without a bucket).'},

  // Agents and brokers
  broker_unavailable: {status: 503, description: 'No connected runtime broker can take the request (none online, or the agent\'s broker is disconnected).'},
  broker_error: {status: 502, description: 'The runtime broker refused or failed the command; the message carries its reason.'},
  broker_timeout: {status: 504, description: 'The runtime broker did not answer in time; the outcome is unknown.'},
  harness_not_installed: {status: 422, description: 'The harness\'s executable is not on the broker\'s PATH; the message names it and how to install it. Nothing was made.'},
  missing_secrets: {status: 422, description: 'The harness needs secrets that neither its config\'s `env` nor the project\'s (or your own) secrets provide; `details.missing` lists `{key, description}`. Set them with `PUT /projects/:id/secrets/:key` (or answer `svc agent create`\'s prompts) and retry. Nothing was made.'},
  ambiguous_agent: {status: 409, description: 'An agent was named by the start of its ID (8 or more characters), and more than one agent\'s ID starts so (`details.prefix`); give more of the ID. `svc agent list` shows prefixes that are unique among the agents it lists.'},
  runtime_unavailable: {status: 422, description: 'The broker cannot run the agent on the runtime asked for (`runtime` at create, or the one a restarted agent started on): not a runtime type (`local`, `docker`, `podman`, `kubernetes`) nor a name of the settings `runtimes`, or its engine is not there. The message names it. Nothing was made.'},
  checkout_invalid: {status: 422, description: 'The project\'s `localPath` is not a git checkout on the broker\'s machine, or has no commit yet.'},
  checkout_detached: {status: 409, description: 'The project\'s checkout has a detached HEAD: an agent\'s branch is made from, and merged back into, a branch. Check one out.'},
  checkout_dirty: {status: 409, description: 'The project\'s checkout has uncommitted changes to tracked files; `details.files` lists them. For a new agent: commit or stash them first, so the agent starts from what you see. For a merge: only changes to files the merge would write are listed.'},
  branch_exists: {status: 409, description: 'The agent\'s branch `svc/<agent>` already exists in the checkout (`details.branch`); delete it or name the agent differently. Nothing was made.'},
  clone_failed: {status: 422, description: 'The broker has no checkout of the project and cloning its `gitRemote` failed; the message carries git\'s reason. Nothing was made.'},
  workspace_failed: {status: 422, description: 'Making the agent\'s own repository failed; the message carries git\'s reason. Nothing was made.'},
  workspace_legacy: {status: 409, description: 'The agent was made by an older svc as a worktree of the project\'s checkout, which an agent could use to change the checkout; it is not started or reviewed any more. Its work is on its branch in the checkout: delete the agent (the branch stays) and create it again.'},
  workspace_tampered: {status: 409, description: 'The agent changed its repository in a way svc does not read on the host (a symbolic link, a rewritten `objects/info/alternates`, a ref that is not a hash, objects that fail git\'s checks). Nothing was read or written; the work can still be read inside the agent.'},

  // Reviewing and landing an agent's work (diff, merge, push)
  no_workspace: {status: 409, description: 'The agent has no git workspace (its project has no checkout or repository), so there is nothing to diff, merge or push.'},
  workspace_missing: {status: 409, description: 'The agent\'s repository no longer exists on its broker (a restart puts a vanished work tree back from the agent\'s repository, or a clone back from its remote when its branch was pushed).'},
  workspace_off_branch: {status: 409, description: 'The agent\'s repository is not on its `svc/<agent>` branch (`details.checkedOut`); check the branch out there, or land the work by hand. Nothing was written.'},
  no_checkout: {status: 409, description: 'Merge: the agent\'s branch has no project checkout on its broker to merge into (a clone of the remote has none). Nothing was written.'},
  already_decided: {status: 409, description: 'Approvals: the approval is no longer pending (allowed, denied, or answered at the agent\'s terminal); `details.state` and `details.decidedBy` say how it ended. Nothing changed.'},
  approval_expired: {status: 409, description: 'Approvals: the harness\'s hook stopped waiting for a decision (its deadline passed) and the request can only be answered at the agent\'s terminal. Nothing changed.'},
  merge_conflict: {status: 409, description: 'Merge: the agent\'s branch conflicts with `baseRef`; `details.files` lists the conflicting paths. The checkout and the agent\'s branch are unchanged.'},
  base_not_checked_out: {status: 409, description: 'Merge: the checkout has another branch (`details.checkedOut`, null for a detached HEAD) checked out, not the agent\'s `baseRef` (`details.baseRef`). Nothing was written.'},
  base_diverged: {status: 409, description: 'Merge: `baseRef` no longer contains the commit the agent started from (it was reset or rewritten; `details.baseCommit`, `details.current`), or it moved during the merge. A person decides how to land the branch; nothing was written.'},
  nothing_to_merge: {status: 409, description: 'Merge: `baseRef` already contains everything on the agent\'s branch (no work, or already merged).'},
  no_remote: {status: 409, description: 'Push: the project\'s repository has no remote, or several and none is tracked by `baseRef` or named `origin` (`details.remotes`).'},
  push_rejected: {status: 409, description: 'Push: the remote refused the branch (not a fast-forward, a hook, a protected branch); `details.output` has git\'s report.'},
  push_failed: {status: 502, description: 'Push: git could not push (network, credentials: git never prompts); `details.output` has git\'s report.'},

  // Settings
  validation_failed: {status: 400, description: 'A settings save has invalid values; `details.sections` lists each problem under its section (`{<section>: [{key, message}]}`). Nothing was written. Status 422 when the problem is a notification channel whose URL is on a loopback, link-local or private address and the channel does not set `allow_private: true`.'},
  revision_conflict: {status: 409, description: 'A settings section changed since it was loaded (the `revisions` sent are stale); nothing was written. Load the settings again and retry.'},
  legacy_server_yaml: {status: 409, description: 'The settings file has no `server` block while the deprecated `~/.svc/server.yaml` is in effect, and the save would create the block; move that file\'s keys first.'},
  layer0_rejected: {status: 422, description: 'Hosted Hub: a bootstrap (Layer-0) field differs from what GET returns; `details.keys` names them. Change the deployment configuration instead.'},
  unclassified_keys_rejected: {status: 422, description: 'A settings save changed a key the Hub does not know; `details.keys` names them.'},
  unpersisted_keys_rejected: {status: 422, description: 'A settings save changed a key this Hub cannot store anywhere (no database home on a hosted Hub, or read-only such as `default_agent_role`); `details.keys` names them.'},
  hub_owned_keys_rejected: {status: 422, description: 'A settings save changed or cleared `server.broker.broker_id` or `broker_token`, which the Hub writes itself.'},
  unsaved_keys_rejected: {status: 422, description: 'Workstation save: a field would not load as sent (wrong type, value outside its set); nothing was saved. `details.keys` and `details.issues` say why.'},
  invalid_timezone: {status: 422, description: '`default_timezone` is not an IANA time zone name (`Local` is refused too).'},
  invalid_cloud_identity_mode: {status: 422, description: '`default_cloud_identity_mode` is not `Block`, `Passthrough` or `Assign`, or is `Assign` without a verified hub-scoped service account and `cloud_iam_check_mode: enforce`.'},
  settings_file_write_failed: {status: 500, description: 'Workstation save: the database sections were saved (listed in `details.applied`) but the final settings-file write failed; the file is unchanged.'},
  secret_scope_restricted: {status: 403, description: 'An agent wrote a project-scope secret while `agent_secrets.user_scope_only` is on; write it with `scope: "user"` or ask a user.'},
  not_system_admin: {status: 403, description: 'The route needs a Hub system admin.'},
  credential_kind_not_allowed: {status: 403, description: 'The route needs an interactive session (`svc auth login` or the web) or the dev credential; user access tokens, agent and broker credentials are refused.'},
  not_loopback: {status: 403, description: 'The route answers only requests from the Hub\'s own host (loopback).'},

  // Delegation adoption admin API
  stale_authorization_preview: {status: 409, description: 'Adoption commit: the plan recomputed in the commit\'s transaction differs from the previewed one (`details.planFingerprint` is the current one); nothing was written. Preview again.'},
  mutation_permission_lost: {status: 403, description: 'Adoption commit: the caller is no longer an active Hub system admin (re-checked inside the commit); nothing was written.'},
  empty_plan: {status: 422, description: 'Adoption commit: the plan writes nothing (no adoptable hop in scope, or no record to revert).'},
  plan_too_large: {status: 422, description: 'Adoption commit: the plan writes more than 500 hops (`details.hops`); narrow the scope by project or agents.'},
  unrevertable_record: {status: 422, description: 'Adoption revert: a record cannot be reverted (unknown, not adopted, already reverted, its adopted edge no longer active, its original row gone, or `covered_original_differs`); `details` names the records and reasons. Nothing was written.'},
  yaml_alias_on_edited_path: {status: 422, description: 'A settings save would edit a key whose path in the settings file uses a YAML anchor, alias or merge key; nothing was written (edit the file by hand).'},
  yaml_alias_limit: {status: 422, description: 'The settings file expands YAML aliases beyond the Hub\'s bound (`details.maxAliasCount`, a guard against alias bombs), wherever they are in the file; nothing was written. Reduce the aliases by hand.'},

  // Messages and keys
  raw_input_removed: {status: 422, description: 'A message carried a `raw` field (any capitalisation, any value); raw input was removed. `details`: `operation_id`, `ingress`, `replacement` (the keys route to use).'},
  message_mode_closed: {status: 409, description: 'The agent\'s message mode is closed: it accepts no messages (keys still work).'},
  unknown_sender: {status: 422, description: 'Broker ingress: the message\'s sender is not a user or agent of the target\'s project.'},
  invalid_topic: {status: 422, description: 'Broker ingress: the topic is not `agent.<agentId>` or `project.<projectId>`.'},
  cross_project_keys_unsupported: {status: 422, description: 'An agent sent keys to an agent of another project.'},
  keys_denied: {status: 403, description: 'The caller may not send keys to this agent (keys are authorized like attach, not by message permission).'},
  agent_not_running: {status: 409, description: 'The agent is stopped or suspended; keys never wake, start or queue an agent. Also a status report sent with an agent\'s credential for an agent that is not live (phase other than `running`, `provisioning` or `cloning`): a session the Hub does not hold cannot set its agent running again. Nothing was stored.'},
  terminal_not_ready: {status: 409, description: 'The agent runs but its terminal is not ready for input.'},
  keys_unavailable: {status: 503, description: 'The keys could not be dispatched (the agent\'s broker is not connected); nothing was sent, so they may be sent again.'},
  keys_outcome_unknown: {status: 502, description: 'The keys may have arrived (the broker failed, dropped or timed out after the send; 504 on a timeout); check before sending again.'},
  keys_unsupported: {status: 422, description: 'The agent\'s runtime broker is older and has no keys operation; upgrade it.'},

  // CLI-side codes (never sent by the Hub)
  hub_unreachable: {status: 0, description: 'CLI: no Hub answered at the endpoint; the message says how to point the CLI elsewhere (`--hub`, `SVC_HUB_ENDPOINT`) (exit code 3).'},
  hub_unsupported: {status: 0, description: 'CLI: the Hub does not offer this operation (exit code 3).'},
  usage_error: {status: 0, description: 'CLI: bad flags or arguments, refused before any request (exit code 2).'},
  image_build_failed: {status: 0, description: 'CLI: `svc image build` could not make the agent base image (debootstrap or the engine missing or failing, not root), or with `--project` the project image (its `.svc/Containerfile` failed to build: the message has the last lines); the message says which (exit code 1).'},
  not_signed_in: {status: 0, description: 'CLI: no credential was found for the Hub (exit code 1).'},
  interactive_required: {status: 0, description: 'CLI: the command needs a prompt but prompts are disabled, `--json` is set or there is no TTY (exit code 2).'},
  wait_timeout: {status: 0, description: 'CLI: `svc agent wait` timed out before the agent reached the awaited state (exit code 1); `details.agent` is the agent as last seen.'},
  agent_failed: {status: 0, description: 'CLI: the agent ended in phase `error` (`svc agent wait`, `svc agent create`; exit code 1); `details.agent` is the agent.'},
  config_invalid: {status: 0, description: 'The settings file could not be read: the message names the file, line, column and key (exit code 2 at start-up, and from every CLI command that reads a settings file that cannot be parsed).'},
} as const satisfies Record<string, ErrorCodeInfo>

export type ErrorCode = keyof typeof ERROR_CODES

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status
}
