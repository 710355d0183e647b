// The tools `svc mcp` offers. Each one is the CLI's own client call (src/client/*) with the
// caller's credential, so the Hub applies every permission, ceiling and budget; the only work
// here is shaping arguments in and results out (ARCHITECTURE habit 15).
import {createHash} from 'node:crypto'
import {createReadStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import {basename} from 'node:path'
import {AppError} from '../api/app-error.js'
import {waitForAgent, WAIT_FOR, type WaitFor} from '../cli/agent-wait.js'
import {agentRoute, agentsApi, type Agent} from '../client/agents-client.js'
import type {HubClient} from '../client/hub-client.js'
import {reviewApi} from '../client/review-client.js'

export interface ToolContext {
  client: HubClient
  /** The project agent names resolve in: the agent's own (SVC_PROJECT_ID) unless told otherwise. */
  projectId: string
}

type Json = Record<string, unknown>
export interface ToolDef {
  name: string
  description: string
  inputSchema: {type: 'object'; properties: Json; required?: string[]; additionalProperties: false}
  run(ctx: ToolContext, args: Json): Promise<unknown>
}

const str = (description: string) => ({type: 'string', description})
const agentArg = {agent: str('Agent name or ID.')}
const num = (description: string) => ({type: 'number', minimum: 0, description})
const LIMITS = {
  type: 'object',
  description: "Budget of the new agent's whole subtree; never more than this agent has left (lowered to that).",
  properties: {
    maxTurns: num('Turns.'),
    maxModelCalls: num('Model calls, as counted in usage.'),
    maxDurationSeconds: num('Wall-clock seconds.'),
    maxCostUsd: num('Cost in USD.'),
    maxChildren: num('Direct children it may create.'),
    maxDepth: num('Generations below it (1: children, no grandchildren).'),
  },
  additionalProperties: false,
}

const text = (args: Json, key: string): string => {
  const v = args[key]
  if (typeof v !== 'string' || v === '') throw new AppError('usage_error', `${key}: a non-empty string is required`)
  return v
}
const optText = (args: Json, key: string): string | undefined => (args[key] === undefined ? undefined : text(args, key))

export const TOOLS: ToolDef[] = [
  {
    name: 'agent_create',
    description: 'Create and start an agent as your child: it works on its own branch made from your branch head; you can wait for it, review its diff and merge it into your branch.',
    inputSchema: {
      type: 'object',
      properties: {name: str('Agent name, unique in the project.'), harness: str('Harness config (default: the project default).'), task: str('The task, sent as its first message.'), limits: LIMITS},
      required: ['name'],
      additionalProperties: false,
    },
    run: ({client, projectId}, a) =>
      agentsApi(client).create({name: text(a, 'name'), projectId, harnessConfig: optText(a, 'harness'), task: optText(a, 'task'), limits: a.limits as Record<string, number> | undefined}),
  },
  {
    name: 'agent_list',
    description: 'List the agents of the project (yours and others you may see), optionally those in one phase.',
    inputSchema: {type: 'object', properties: {phase: str('Only agents in this phase (running, stopped, error, ...).')}, additionalProperties: false},
    run: ({client, projectId}, a) => agentsApi(client).list({projectId, phase: optText(a, 'phase')}),
  },
  {
    name: 'agent_get',
    description: "Show an agent: phase, activity, detail, branch, parent, limits and usage.",
    inputSchema: {type: 'object', properties: agentArg, required: ['agent'], additionalProperties: false},
    run: ({client, projectId}, a) => agentsApi(client).get(projectId, text(a, 'agent')),
  },
  {
    name: 'agent_wait',
    description: 'Wait until an agent reaches a state: input (asks for input), idle (its turn ended), done (stopped or failed) or any of these. Answers the agent.',
    inputSchema: {
      type: 'object',
      properties: {...agentArg, for: {type: 'string', enum: [...WAIT_FOR], description: 'State to wait for (default: any).'}, timeoutSeconds: num('Give up after this many seconds (answers timeout).')},
      required: ['agent'],
      additionalProperties: false,
    },
    run: async ({client, projectId}, a) => {
      const want = (optText(a, 'for') ?? 'any') as WaitFor
      if (!WAIT_FOR.includes(want)) throw new AppError('usage_error', `for: one of ${WAIT_FOR.join(', ')}`)
      const first = (await agentsApi(client).get(projectId, text(a, 'agent'))).agent
      const read = async () => (await client.call<{agent: Agent}>('GET', `/api/v1/agents/${encodeURIComponent(first.id)}`)).agent
      const timeoutMs = typeof a.timeoutSeconds === 'number' ? a.timeoutSeconds * 1000 : null
      return {agent: await waitForAgent(client, read, want, timeoutMs, {base: first})}
    },
  },
  {
    name: 'agent_diff',
    description: "An agent's changes against its base (for your child: your branch), as a patch per file; stat: true gives counts only.",
    inputSchema: {type: 'object', properties: {...agentArg, stat: {type: 'boolean', description: 'Counts only, no patch.'}}, required: ['agent'], additionalProperties: false},
    run: ({client, projectId}, a) => reviewApi(client).diff(projectId, text(a, 'agent'), {stat: a.stat === true}),
  },
  {
    name: 'agent_merge',
    description: "Merge your child's work into your branch and working tree. Refused with merge_conflict or checkout_dirty (changing nothing), and for any agent not your own child.",
    inputSchema: {
      type: 'object',
      properties: {...agentArg, squash: {type: 'boolean', description: 'One squashed commit.'}, message: str('Commit message.')},
      required: ['agent'],
      additionalProperties: false,
    },
    run: ({client, projectId}, a) => {
      const message = optText(a, 'message')
      return reviewApi(client).merge(projectId, text(a, 'agent'), {strategy: a.squash === true ? 'squash' : 'merge', ...(message && {message})})
    },
  },
  {
    name: 'agent_message',
    description: 'Send a message to an agent (typed into its harness as a prompt).',
    inputSchema: {
      type: 'object',
      properties: {...agentArg, message: str('The message.'), interrupt: {type: 'boolean', description: 'Interrupt its current turn first.'}},
      required: ['agent', 'message'],
      additionalProperties: false,
    },
    run: ({client, projectId}, a) =>
      client.call('POST', `${agentRoute(text(a, 'agent'), projectId)}/message`, {message: text(a, 'message'), ...(a.interrupt === true && {interrupt: true})}),
  },
  {
    name: 'agent_tree',
    description: "Who spawned whom below an agent (default: you, when you are an agent): each node's state, branch, changes and cost, with the subtree's totals.",
    inputSchema: {type: 'object', properties: {agent: str('Agent name or ID (default: yourself).')}, additionalProperties: false},
    run: ({client, projectId}, a) => {
      const agent = optText(a, 'agent') ?? process.env.SVC_AGENT_ID
      if (!agent) throw new AppError('usage_error', 'agent: required outside an agent')
      return client.call('GET', `${agentRoute(agent, projectId)}/tree`)
    },
  },
  {
    name: 'artifact_publish',
    description: 'Publish a file as an artifact (shared with people and agents of the project), or as a new version of an artifact.',
    inputSchema: {
      type: 'object',
      properties: {path: str('Path of the file to publish.'), title: str('Title.'), artifactId: str('Publish as a new version of this artifact.')},
      required: ['path'],
      additionalProperties: false,
    },
    run: async ({client}, a) => {
      const file = text(a, 'path')
      const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
        throw new AppError('usage_error', `cannot read ${file}: ${err.code ?? err.message}`)
      })
      if (!st.isFile()) throw new AppError('usage_error', `${file} is not a regular file`)
      const hash = createHash('sha256')
      for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
      return client.publishArtifact(file, st.size, {name: basename(file), title: optText(a, 'title'), artifactId: optText(a, 'artifactId')}, hash.digest('hex'))
    },
  },
]
