/**
 * Teams, the tree route on SQLite: one generation's live children, each with its node's JSON
 * built by SQLite (json_object) rather than as a record, a view and a JSON.stringify in the Hub.
 * A 1,000-agent tree is 1,000 rows; one text a row instead of 33 values and three objects is
 * what keeps the route within its bench target (docs/teams.md, "Benchmarks").
 *
 * The JSON holds the fields of `agentView` (domain/agents/agent-state.ts) that are the record's
 * own, as `toAgent` reads them (a JSON column that does not parse is null, as `parseJson` makes
 * it); the fields a pending status report or the clock change, and `limits`, come as values for
 * the domain to finish with the same functions every other read uses. The tree store test holds
 * the two to the same answer field for field.
 */

/** One child as `TREE_LEVEL` reads it (value arrays; the indexes below). */
export type TreeLevelRow = [
  id: string,
  parentId: string,
  phase: string,
  activity: string | null,
  detail: string,
  error: string | null,
  lastHeartbeatAt: string | null,
  updatedAt: string,
  /** The `limits` column when it is a JSON object, else null. */
  limits: string | null,
  /** `config.applied` as JSON text, only when `limits` is null (the limits are then derived from it). */
  applied: string | null,
  modelCalls: number | null,
  costUsd: number | null,
  turns: number,
  /** `{...}` of the record's own fields of the view (everything but the live ones and `limits`). */
  json: string,
]

const valid = (column: string) => `case when json_valid(${column}) then json(${column}) end`

const NODE_JSON = `json_object(
  'id', id, 'name', name, 'slug', name, 'projectId', project_id, 'brokerId', broker_id,
  'harnessConfig', harness_config, 'template', template, 'task', task, 'role', role, 'runtime', runtime,
  'createdBy', json_object('kind', created_by_kind, 'id', created_by_id),
  'createdAt', created_at, 'updatedAt', updated_at, 'messageMode', message_mode,
  'appliedSettings', coalesce(json(nullif(config -> '$.applied', 'null')), json('{}')),
  'workspace', ${valid('workspace')}, 'image', image, 'sandbox', sandbox, 'turns', coalesce(turns, 0),
  'usage', ${valid('usage')},
  'parent', case when parent_id is not null and parent_id <> '' then json_object('id', parent_id, 'name', coalesce(parent_name, '')) end,
  'group', group_name, 'check', ${valid('check_result')})`

// The limits as an object, else null (the Hub writes an object or null); json_type runs only on valid JSON.
const LIMITS = `case when (case when json_valid(limits) then json_type(limits) end) = 'object' then limits end`

/** The live children in project `?` of the parents in the JSON array `?`, by creation (the `agents_parent` index). */
export const TREE_LEVEL = `select id, parent_id, phase, activity, detail, error, last_heartbeat_at, updated_at,
  ${LIMITS}, case when ${LIMITS} is null then config -> '$.applied' end,
  case when json_valid(usage) then usage ->> '$.modelCalls' end,
  case when json_valid(usage) then usage ->> '$.costUsd' end,
  coalesce(turns, 0),
  ${NODE_JSON}
  from agents where deleted_at is null and project_id = ? and parent_id in (select value from json_each(?)) order by created_at, id`
