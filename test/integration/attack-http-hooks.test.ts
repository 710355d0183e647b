import {afterAll, beforeAll, expect, it} from 'vitest'
import {typedInto} from '../helpers/agent-shell.js'
import {describeEachDialect} from '../helpers/hub.js'
import {startLiveHub, waitFor, type LiveHub} from '../helpers/live-hub.js'

/**
 * Attack on Claude Code's HTTP hook route (`POST /api/v1/agents/:id/hooks/claude`), from inside a
 * real sandboxed `shell` agent A on the local runtime, with plain curl and A's own token: report
 * another agent B's activity (its path, A's token; A's token with B's ID in the body), and send
 * a turn's end through it (a Stop would count a turn: only the sandbox's command hook may).
 * Every try is refused and B is unchanged. Control: A's hook input for itself shows on A.
 */
describeEachDialect('attack: an agent reports as another through the HTTP hook route', (dialect) => {
  let hub: LiveHub
  beforeAll(async () => {
    hub = await startLiveHub(dialect)
  })
  afterAll(() => hub?.dispose())

  const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell'}})).body.agent
  const get = async (id: string) => (await hub.request('GET', `/api/v1/agents/${id}`)).body.agent
  // Inside A: its own token (as Claude Code's header would carry it) and the Hub endpoint it was given.
  const post = (id: string, body: Record<string, unknown>) =>
    `$(curl -s -o /dev/null -w %{http_code} --max-time 10 -H "authorization: Bearer \${SVC_AUTH_TOKEN:-$(cat "$SVC_AUTH_TOKEN_FILE")}" -H 'content-type: application/json' -d '${JSON.stringify(body)}' "$SVC_HUB_ENDPOINT/api/v1/agents/${id}/hooks/claude")`

  it('A cannot report B\'s tool calls or a turn\'s end; its own tool call shows', async () => {
    const a = await create('a')
    const b = await create('b')
    expect(a).toMatchObject({phase: 'running', sandbox: 'bubblewrap'})
    await waitFor(async () => (await hub.request('POST', `/api/v1/agents/${a.id}/keys`, {body: {keys: 'true\r'}})).status === 200, 20_000, 'the terminal')
    const before = await get(b.id)
    const spoof = {hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: 'spoofed-by-a'}}

    expect(await typedInto(hub, a.id, `echo "other=${post(b.id, spoof)}"`, 'other')).toBe('401')
    expect(await typedInto(hub, a.id, `echo "inbody=${post(b.id, {...spoof, agent_id: b.id, session_id: b.id})}"`, 'inbody')).toBe('401')
    expect(await typedInto(hub, a.id, `echo "stop=${post(a.id, {hook_event_name: 'Stop'})}"`, 'stop')).toBe('400')
    expect(await get(b.id)).toEqual(before)
    expect((await get(a.id)).turns ?? 0).toBe(0)

    // Control: A's own tool call, through the same route from inside.
    expect(await typedInto(hub, a.id, `echo "own=${post(a.id, {hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {command: 'make'}})}"`, 'own')).toBe('200')
    expect(await get(a.id)).toMatchObject({activity: 'executing', detail: 'Bash: make'})
  })
})
