import type {} from '@fastify/websocket'
import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {AgentsService, CreateAgentInput} from '../../domain/agents/agents-service.js'
import {createAttempts} from '../../domain/teams/attempts.js'
import {ctxOf} from '../plugins/auth.js'
import {isUpgrade, pipeStream, refusedOnSocket} from './agent-streams.js'
import type {StreamGate} from '../../domain/agents/stream-slots.js'

const str = {type: 'string', minLength: 1, maxLength: 200} as const
const createBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: str,
    projectId: str,
    harnessConfig: str,
    template: str,
    task: {type: 'string', maxLength: 100_000},
    brokerId: str,
    role: str,
    // Teams: the parent agent (ID or name) a person puts this one under.
    parentId: str,
    // A runtime of the broker (a type or a settings `runtimes` name); the broker decides whether it can.
    runtime: {type: 'string', minLength: 1, maxLength: 63},
    // Overrides of the registered project settings; validated by the same rules.
    maxTurns: {},
    maxModelCalls: {},
    maxDuration: {},
    resources: {},
    model: {},
    thinkingLevel: {},
    timezone: {},
    cloudIdentityMode: {},
    cloudIdentityServiceAccountId: {},
    // Telemetry override of this agent (the settings file's `telemetry` table), checked by the domain.
    telemetry: {type: 'object'},
    // Teams: the budget of the agent's subtree; checked and lowered by the domain (teams/budgets.ts).
    limits: {type: 'object'},
    // Teams, attempts: N agents <name>-1..N on one task (teams/attempts.ts), and a check run on idle.
    attempts: {type: 'integer'},
    harnessConfigs: {type: 'array', items: str},
    check: {type: 'string', minLength: 1, maxLength: 10_000},
  },
} as const
const reincarnateBody = {type: 'object', additionalProperties: false, properties: {role: str}} as const
const deleteQuery = {type: 'object', additionalProperties: false, properties: {branch: {type: 'boolean'}}} as const
/** `setup: true` (restart only): the workspace's setup runs again before the harness. */
const actionBody = {type: 'object', additionalProperties: false, properties: {setup: {type: 'boolean'}}} as const
const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {projectId: str, grove: str, groveId: str, userId: str, phase: str, group: str},
} as const

type Params = {id: string; projectId?: string}

/**
 * Agents, at `/api/v1/agents/:id` and in project-scoped form at
 * `/api/v1/projects/:projectId/agents/:id` (`:id` is the agent's ID or its name in the project).
 */
export function agentRoutes(app: FastifyInstance, agents: AgentsService, gates: {attach?: StreamGate; logs?: StreamGate} = {}) {
  const forms: Array<{base: string; params: object}> = [
    {base: '/api/v1/agents/:id', params: {type: 'object', required: ['id'], properties: {id: str}}},
    ...['projects', 'groves'].map((p) => ({
      base: `/api/v1/${p}/:projectId/agents/:id`,
      params: {type: 'object', required: ['id', 'projectId'], properties: {id: str, projectId: str}},
    })),
  ]
  const ref = (request: FastifyRequest) => request.params as Params

  app.get('/api/v1/agents', {schema: {querystring: listQuery}}, async (request) => {
    const q = request.query as Record<string, string | undefined>
    return {agents: await agents.list(ctxOf(request), {projectId: q.projectId ?? q.groveId ?? q.grove, userId: q.userId, phase: q.phase, group: q.group})}
  })
  // With `attempts`: `{group, agents}` (teams/attempts.ts); else `{agent}`.
  const create = async (request: FastifyRequest, body: CreateAgentInput) => (body.attempts !== undefined || body.harnessConfigs !== undefined ? createAttempts(agents, ctxOf(request), body) : {agent: await agents.create(ctxOf(request), body)})
  app.post('/api/v1/agents', {schema: {body: {...createBody, required: ['name', 'projectId']}}}, async (request, reply) => reply.code(201).send(await create(request, request.body as CreateAgentInput)))
  for (const p of ['projects', 'groves']) {
    const params = {type: 'object', required: ['projectId'], properties: {projectId: str}}
    app.get(`/api/v1/${p}/:projectId/agents`, {schema: {params, querystring: listQuery}}, async (request) => {
      const q = request.query as Record<string, string | undefined>
      return {agents: await agents.list(ctxOf(request), {projectId: (request.params as Params).projectId, userId: q.userId, phase: q.phase, group: q.group})}
    })
    app.post(`/api/v1/${p}/:projectId/agents`, {schema: {params, body: createBody}}, async (request, reply) =>
      reply.code(201).send(await create(request, {...(request.body as Record<string, unknown>), projectId: (request.params as Params).projectId!} as CreateAgentInput)),
    )
  }

  for (const {base, params} of forms) {
    app.get(base, {schema: {params}}, async (request) => ({agent: await agents.get(ctxOf(request), ref(request).id, ref(request).projectId)}))
    // `?branch=true`: the agent's branch goes too once merged into its base (else kept, saying why).
    app.delete(base, {schema: {params, querystring: deleteQuery}}, async (request) =>
      agents.delete(ctxOf(request), ref(request).id, ref(request).projectId, {branch: (request.query as {branch?: boolean}).branch === true}),
    )
    for (const action of ['stop', 'start'] as const) {
      app.post(`${base}/${action}`, {schema: {params}}, async (request) => ({agent: await agents[action](ctxOf(request), ref(request).id, ref(request).projectId)}))
    }
    app.post(`${base}/restart`, {schema: {params, body: actionBody}}, async (request) => ({
      agent: await agents.restart(ctxOf(request), ref(request).id, ref(request).projectId, {setup: (request.body as {setup?: boolean} | undefined)?.setup === true}),
    }))
    // Re-records the delegation edge when the rules say so, then restarts with a fresh token.
    app.post(`${base}/reincarnate`, {schema: {params, body: reincarnateBody}}, async (request) => ({
      agent: await agents.reincarnate(ctxOf(request), ref(request).id, (request.body ?? {}) as {role?: string}, ref(request).projectId),
    }))
    // `${base}/status` is agent-status.ts: registered outside the generic hooks (app.ts).
    app.post(`${base}/token/refresh`, {config: {livenessReport: true}, schema: {params}}, async (request) => {
      const current = /^Bearer\s+(\S+)/i.exec(request.headers.authorization ?? '')?.[1] ?? ''
      return agents.refreshToken(ctxOf(request), ref(request).id, current)
    })

    // Logs: plain GET answers the output so far as screen text (`?raw=true`: the terminal bytes);
    // a WebSocket upgrade follows live output (terminal bytes).
    app.route({
      method: 'GET',
      url: `${base}/logs`,
      schema: {params, querystring: {type: 'object', properties: {raw: {type: 'boolean'}}}},
      preHandler: async (request) => {
        if (isUpgrade(request)) await refusedOnSocket(request, () => agents.openStream(ctxOf(request), ref(request).id, 'logs', {}, ref(request).projectId, gates.logs))
      },
      handler: async (request, reply) => {
        const format = (request.query as {raw?: boolean}).raw ? 'raw' : 'screen'
        return reply.type('text/plain; charset=utf-8').send(await agents.logs(ctxOf(request), ref(request).id, ref(request).projectId, format))
      },
      wsHandler: (socket, request) => pipeStream(socket, request, {readOnly: true}),
    })

    // Attach: an interactive terminal through the Hub and the broker's tunnel.
    app.route({
      method: 'GET',
      url: `${base}/attach`,
      schema: {params, querystring: {type: 'object', properties: {cols: {type: 'integer', minimum: 1, maximum: 1000}, rows: {type: 'integer', minimum: 1, maximum: 1000}}}},
      preHandler: async (request) => {
        const q = request.query as {cols?: number; rows?: number}
        const open = () => agents.openStream(ctxOf(request), ref(request).id, 'attach', {cols: q.cols ?? 80, rows: q.rows ?? 24}, ref(request).projectId, gates.attach)
        if (isUpgrade(request)) await refusedOnSocket(request, open)
        else request.agentStream = await open()
      },
      // Authorized and opened, but not upgraded: close the broker stream and say what is needed.
      handler: async (request, reply) => {
        request.agentStream?.close()
        return reply.code(426).header('upgrade', 'websocket').send({error: {code: 'invalid_request', message: 'attach needs a WebSocket upgrade', requestId: request.id}})
      },
      wsHandler: (socket, request) => pipeStream(socket, request, {readOnly: false}),
    })
  }
}
