import {randomUUID} from 'node:crypto'
import type {Readable} from 'node:stream'
import {AppError, notFound} from '../../api/app-error.js'
import {formatArtifactRef} from '../../api/artifact-ref.js'
import type {ArtifactListItem, ArtifactManifestEntry, ArtifactView} from '../../api/dto.js'
import type {BlobStore} from '../../blobs/index.js'
import type {ArtifactRow, ArtifactVersionRow, GrantRow} from '../../store/repositories/artifacts.js'
import type {CallContext} from '../authz/context.js'
import {decideProject} from '../authz/decide.js'
import type {ProjectRole} from '../authz/permissions.js'
import type {Deps} from '../deps.js'
import {iso} from '../shared/clock.js'
import {newId} from '../shared/secrets.js'
import {createWalkGuard} from '../delegation/walk-guard.js'
import {decideManage, decidePublish, decideRead, SCOPE_ARTIFACT_READ, type ArtifactFacts, type ManageAction, type RolesOf} from './access.js'
import {contentDisposition, contentTypeHeader, mediaTypeOf} from './media-types.js'

export interface ArtifactsDeps extends Deps {
  /** Null when the Hub has no artifact storage (503 `artifact_storage_unconfigured`). */
  blobs: BlobStore | null
  /** Largest accepted file (`artifacts.max_file_bytes`). */
  maxFileBytes: number
}

export type {ArtifactListItem, ArtifactView} from '../../api/dto.js'
export type ManifestEntry = ArtifactManifestEntry

export interface GrantView {
  kind: 'user' | 'project'
  id: string
  grantedBy: string
  createdAt: string
}

/** The upload of one file: the raw request body and what the request says about it. */
export interface Upload {
  name: string
  body: Readable
  /** Content-Length, when sent. */
  size?: number
  /** X-Content-SHA256, when sent. */
  sha256?: string
  signal?: AbortSignal
}

export type FileDelivery =
  | {kind: 'redirect'; url: string; entry: ManifestEntry}
  | {kind: 'stream'; entry: ManifestEntry; open: () => Promise<{stream: Readable; size: number}>}

/** How long a signed object-storage URL stays valid. */
export const PRESIGN_SECONDS = 300

const fieldError = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})
const SHA256 = /^[0-9a-f]{64}$/

/** A file name, not a path: no separators, no control characters, at most 255 bytes. */
function checkName(name: string | undefined): string {
  if (name === undefined || name === '') throw fieldError('querystring.name', 'is required')
  if (Buffer.byteLength(name) > 255) throw fieldError('querystring.name', 'must be at most 255 bytes')
  // eslint-disable-next-line no-control-regex
  if (/[/\\\x00-\x1f\x7f]/.test(name) || name === '.' || name === '..') throw fieldError('querystring.name', 'must be a file name without slashes or control characters')
  // Bidi overrides, zero-width and other format characters (Unicode category Cf) make a name
  // display as something else (`report\u202Etxt.exe` shows as `reportexe.txt`).
  if (/\p{Cf}/u.test(name)) throw fieldError('querystring.name', 'must not contain invisible format characters (Unicode bidi controls, zero-width characters)')
  return name
}

/** The one refusal of a publish into a project the caller is not in, or that does not exist. */
const refusePublish = (scope: string) => new AppError('forbidden', `not allowed: artifact.create in project ${scope}`, {permission: 'artifact.create'})

function checkSha(sha: string | undefined): string | undefined {
  if (sha === undefined) return undefined
  const s = sha.trim().toLowerCase()
  if (!SHA256.test(s)) throw fieldError('headers.x-content-sha256', 'must be 64 hexadecimal characters (the SHA-256 of the body)')
  return s
}

const tooLarge = (max: number, size?: number) =>
  new AppError('file_too_large', `the file exceeds the largest artifact file this Hub accepts (${max} bytes, artifacts.max_file_bytes)`, {maxBytes: max, ...(size !== undefined && {size})})

export function createArtifactsService(deps: ArtifactsDeps) {
  const {store, clock, logger, blobs, maxFileBytes, config} = deps
  const now = () => iso(clock.now())
  const walk = createWalkGuard(deps)

  function storage(): BlobStore {
    if (!blobs) throw new AppError('artifact_storage_unconfigured', 'this Hub has no artifact storage configured (server.storage.provider)')
    return blobs
  }

  const pageUrl = (a: ArtifactRow) => `${config.publicUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(a.projectId)}/artifacts/${encodeURIComponent(a.id)}`

  function view(a: ArtifactRow, v: ArtifactVersionRow): ArtifactView {
    return {
      artifact: {id: a.id, ref: formatArtifactRef(a.id), title: a.title, owner: {kind: a.ownerKind, id: a.ownerId}, projectId: a.projectId, currentVersion: a.currentVersion, createdAt: a.createdAt},
      version: {seq: v.seq, ref: formatArtifactRef(a.id, v.seq), createdAt: v.createdAt, manifest: v.files.map(({path, size, sha256, mediaType}) => ({path, size, sha256, mediaType}))},
      url: pageUrl(a),
    }
  }

  async function rolesOf(ctx: CallContext, projectIds: string[]): Promise<RolesOf> {
    const roles: Record<string, ProjectRole | null> = {}
    if (ctx.principal.kind !== 'user') return roles
    for (const id of new Set(projectIds)) roles[id] = (await store.projects.roleOf(id, ctx.principal.id)) as ProjectRole | null
    return roles
  }

  /** Loads an artifact the caller may read; anything else is 404, exactly as if it did not exist. */
  async function loadReadable(ctx: CallContext, id: string): Promise<{a: ArtifactRow; facts: ArtifactFacts}> {
    const a = await store.artifacts.get(id)
    if (!a) throw notFound('artifact')
    const grants = await store.artifacts.grants(id)
    const facts: ArtifactFacts = {ownerKind: a.ownerKind, ownerId: a.ownerId, projectId: a.projectId, grants}
    const roles = await rolesOf(ctx, [a.projectId, ...grants.filter((g) => g.granteeKind === 'project').map((g) => g.granteeId)])
    if (!decideRead(ctx, facts, roles).allowed) throw notFound('artifact')
    // An agent also needs artifact.read along its delegation chain; unreadable looks absent.
    if (!(await walk.decide(ctx, 'artifact.read')).allowed) throw notFound('artifact')
    return {a, facts}
  }

  /** Readers who may not do `action` get 403; non-readers never get here (404). */
  async function loadManageable(ctx: CallContext, id: string, action: ManageAction) {
    const loaded = await loadReadable(ctx, id)
    const d = decideManage(ctx, loaded.facts, action)
    if (!d.allowed) throw new AppError('forbidden', `only the artifact's owner may ${action === 'version' ? 'publish new versions of' : action} it`, {reason: d.reason})
    await walk.require(ctx, 'artifact.create', {message: `not allowed: artifact.create in project ${loaded.a.projectId}`})
    return loaded
  }

  async function loadVersion(a: ArtifactRow, seq: number | null): Promise<ArtifactVersionRow> {
    const v = await store.artifacts.version(a.id, seq ?? a.currentVersion)
    if (!v) throw notFound('artifact version', {seq})
    return v
  }

  /** An agent token without the read scope is refused publishing with 401 (spec Errors). */
  function refuseScopelessAgent(ctx: CallContext) {
    if (ctx.principal.kind === 'agent' && !ctx.scopes?.has(SCOPE_ARTIFACT_READ)) {
      throw new AppError('unauthorized', `this agent token lacks scope ${SCOPE_ARTIFACT_READ}; recreate the agent to use artifacts`)
    }
  }

  /**
   * Streams an upload to storage under a fresh key, hashing as it goes. Over the size limit
   * (announced or actual) is 413, a digest other than the announced one is 400
   * `sha256_mismatch`; in both cases, and when the client goes away, nothing is kept.
   */
  async function store1(artifactId: string, up: Upload): Promise<ManifestEntry & {blobKey: string}> {
    const b = storage()
    const sha = checkSha(up.sha256)
    if (up.size !== undefined && up.size > maxFileBytes) throw tooLarge(maxFileBytes, up.size)
    const blobKey = `artifacts/${artifactId}/${randomUUID()}`
    // Errors reach the caller through `put`. This listener stays after `put` has settled, so a
    // late failure of the request (a client that goes away) is never an uncaught exception.
    up.body.on('error', () => {})
    const info = await b.put(blobKey, up.body, {
      signal: up.signal,
      size: up.size,
      // Enforced while streaming too (a body without Content-Length); the store stops reading.
      limit: {bytes: maxFileBytes, error: () => tooLarge(maxFileBytes)},
      accept: (got) => {
        if (sha && got.sha256 !== sha) {
          throw new AppError('sha256_mismatch', 'the uploaded bytes do not match X-Content-SHA256; nothing was stored', {expected: sha, actual: got.sha256, size: got.size})
        }
      },
    })
    return {path: up.name, size: info.size, sha256: info.sha256, mediaType: mediaTypeOf(up.name), blobKey}
  }

  /** Runs `write`; if it fails, the blob it was about to reference is removed. */
  async function committing<T>(blobKey: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } catch (err) {
      await storage().delete(blobKey).catch((e) => logger.warn({err: e, blobKey}, 'could not remove an orphaned artifact blob'))
      throw err
    }
  }

  return {
    /**
     * Publishes a new artifact (version 1). `scope` is the home project: an agent's defaults to
     * its own project; a user must name one (ID or slug) where it holds `artifact.create`.
     */
    async publish(ctx: CallContext, input: Upload & {title?: string; scope?: string}): Promise<ArtifactView> {
      storage()
      const name = checkName(input.name)
      const title = (input.title ?? '').trim() || name
      if (title.length > 500) throw fieldError('querystring.title', 'must be at most 500 characters')
      let projectId: string
      const p = ctx.principal
      if (p.kind === 'agent') {
        // An agent may name its own project (by ID or slug); anything else is refused below.
        const named = input.scope ? ((await store.projects.get(input.scope)) ?? (await store.projects.getBySlug(input.scope))) : null
        projectId = named?.id ?? input.scope ?? p.projectId
      } else {
        if (!input.scope) throw fieldError('querystring.scope', 'is required: name the project to publish into')
        const project = (await store.projects.get(input.scope)) ?? (await store.projects.getBySlug(input.scope))
        projectId = project?.id ?? input.scope
        if (!project) throw refusePublish(input.scope)
      }
      const role = (await rolesOf(ctx, [projectId]))[projectId] ?? null
      const d = decidePublish(ctx, projectId, role)
      if (!d.allowed) {
        if (d.status === 401) refuseScopelessAgent(ctx)
        // A caller outside the project gets exactly the refusal of a project that does not
        // exist: the scope as sent, no reason, no resolved ID. A member learns why.
        if (p.kind === 'user' && !role) throw refusePublish(input.scope ?? projectId)
        throw new AppError('forbidden', `not allowed: artifact.create in project ${input.scope ?? projectId}`, {permission: 'artifact.create', reason: d.reason})
      }
      await walk.require(ctx, 'artifact.create', {message: `not allowed: artifact.create in project ${projectId}`})

      const id = newId()
      const file = await store1(id, input)
      return committing(file.blobKey, async () => {
        const t = now()
        const a: ArtifactRow = {id, title, ownerKind: p.kind as 'user' | 'agent', ownerId: p.id, projectId, currentVersion: 1, createdAt: t, updatedAt: t}
        const v: ArtifactVersionRow = {artifactId: id, seq: 1, entryPath: file.path, createdByKind: p.kind, createdById: p.id, createdAt: t, files: [file]}
        await store.transaction(async (tx) => {
          await tx.artifacts.insert(a)
          await tx.artifacts.insertVersion(v)
        })
        logger.info({artifactId: id, projectId, owner: `${p.kind}:${p.id}`, size: file.size}, 'artifact published')
        return view(a, v)
      })
    },

    /** Publishes the next version of an artifact the caller owns. */
    async publishVersion(ctx: CallContext, id: string, input: Upload): Promise<ArtifactView> {
      storage()
      refuseScopelessAgent(ctx)
      const name = checkName(input.name)
      await loadManageable(ctx, id, 'version')
      const file = await store1(id, input)
      return committing(file.blobKey, async () => {
        // Two publishers racing for the same number: the loser retries with the next one.
        for (let attempt = 0; ; attempt++) {
          try {
            return await store.transaction(async (tx) => {
              const a = await tx.artifacts.get(id)
              if (!a) throw notFound('artifact')
              const seq = a.currentVersion + 1
              const t = now()
              const v: ArtifactVersionRow = {artifactId: id, seq, entryPath: name, createdByKind: ctx.principal.kind, createdById: ctx.principal.id, createdAt: t, files: [file]}
              await tx.artifacts.insertVersion(v)
              if (!(await tx.artifacts.advance(id, a.currentVersion, seq, t))) throw new AppError('conflict', 'artifact changed concurrently')
              logger.info({artifactId: id, seq, size: file.size}, 'artifact version published')
              return view({...a, currentVersion: seq, updatedAt: t}, v)
            })
          } catch (err) {
            if (!(err instanceof AppError && err.code === 'conflict') || attempt >= 4) throw err
          }
        }
      })
    },

    /** The artifact with its current version (or version `seq`). */
    async get(ctx: CallContext, id: string, seq: number | null = null): Promise<ArtifactView> {
      const {a} = await loadReadable(ctx, id)
      return view(a, await loadVersion(a, seq))
    },

    /**
     * The artifacts homed in a project (ID or slug) that the caller may read, each with every
     * version (newest first). A project that does not exist and one the caller cannot read and
     * holds nothing readable in are the same 404, so the answer never tells which.
     */
    async listInProject(ctx: CallContext, idOrSlug: string): Promise<ArtifactListItem[]> {
      const project = (await store.projects.get(idOrSlug)) ?? (await store.projects.getBySlug(idOrSlug))
      if (!project) throw notFound('project')
      const readable: ArtifactListItem[] = []
      const walked = (await walk.decide(ctx, 'artifact.read')).allowed
      for (const a of walked ? await store.artifacts.listByProject(project.id) : []) {
        const grants = await store.artifacts.grants(a.id)
        const facts: ArtifactFacts = {ownerKind: a.ownerKind, ownerId: a.ownerId, projectId: a.projectId, grants}
        const roles = await rolesOf(ctx, [a.projectId, ...grants.filter((g) => g.granteeKind === 'project').map((g) => g.granteeId)])
        if (!decideRead(ctx, facts, roles).allowed) continue
        const versions = await store.artifacts.versions(a.id)
        const current = versions.find((v) => v.seq === a.currentVersion)
        if (!current) continue
        readable.push({...view(a, current), versions: versions.map((v) => view(a, v).version)})
      }
      if (!readable.length) {
        const p = ctx.principal
        const member = p.kind === 'agent' ? p.projectId === project.id : decideProject(ctx, project.id, (await rolesOf(ctx, [project.id]))[project.id] ?? null, 'project.read').allowed
        if (!member) throw notFound('project')
      }
      return readable
    },

    /**
     * A file of the current version (or of `seq`). With object storage and `preferRedirect`
     * the answer is a short-lived signed URL; otherwise the bytes.
     */
    async file(ctx: CallContext, id: string, seq: number | null, path: string, opts: {preferRedirect: boolean}): Promise<FileDelivery> {
      const {a} = await loadReadable(ctx, id)
      const v = await loadVersion(a, seq)
      const f = v.files.find((x) => x.path === path)
      if (!f) throw notFound('artifact file', {path})
      const b = storage()
      const entry: ManifestEntry = {path: f.path, size: f.size, sha256: f.sha256, mediaType: f.mediaType}
      if (opts.preferRedirect && b.presign) {
        const url = await b.presign(f.blobKey, {expiresIn: PRESIGN_SECONDS, contentType: contentTypeHeader(f.mediaType), contentDisposition: contentDisposition(f.mediaType, f.path)})
        return {kind: 'redirect', url, entry}
      }
      // Opened only when needed: a conditional request answered 304 never touches storage.
      const open = async () => {
        const got = await b.get(f.blobKey)
        if (!got) throw new AppError('not_found', 'the bytes of this artifact file are missing from storage', {path})
        return got
      }
      return {kind: 'stream', entry, open}
    },

    /** How the owner is shown on the artifact page: a user's name, or the agent's ID. */
    async ownerLabel(a: ArtifactView['artifact']): Promise<string> {
      if (a.owner.kind !== 'user') return `agent ${a.owner.id}`
      const u = await store.users.get(a.owner.id)
      return u ? `${u.displayName || u.email} (${u.email})` : `user ${a.owner.id}`
    },

    /** Deletes an artifact, every version and its bytes (owner only; never agents). */
    async delete(ctx: CallContext, id: string): Promise<ArtifactView> {
      const {a} = await loadManageable(ctx, id, 'delete')
      const v = await loadVersion(a, null)
      const keys = await store.artifacts.blobKeys(id)
      await store.transaction(async (tx) => {
        await tx.artifacts.delete(id)
      })
      if (blobs) for (const k of keys) await blobs.delete(k).catch((err) => logger.warn({err, blobKey: k}, 'could not remove an artifact blob'))
      logger.info({artifactId: id, by: `${ctx.principal.kind}:${ctx.principal.id}`}, 'artifact deleted')
      return view(a, v)
    },

    async grants(ctx: CallContext, id: string): Promise<GrantView[]> {
      await loadManageable(ctx, id, 'share')
      return (await store.artifacts.grants(id)).map(grantView)
    },

    /**
     * Shares read access with a user (by ID or e-mail) or a project (by ID or slug). Granting
     * again changes nothing.
     */
    async grant(ctx: CallContext, id: string, to: {userId?: string; email?: string; projectId?: string}): Promise<GrantView[]> {
      await loadManageable(ctx, id, 'share')
      let grantee: Pick<GrantRow, 'granteeKind' | 'granteeId'>
      if (to.projectId) {
        // By ID any project; by slug (guessable) only one the caller can see, so grants do not
        // reveal which slugs exist.
        let project = await store.projects.get(to.projectId)
        if (!project) {
          const bySlug = await store.projects.getBySlug(to.projectId)
          const role = bySlug ? (await rolesOf(ctx, [bySlug.id]))[bySlug.id] ?? null : null
          if (bySlug && decideProject(ctx, bySlug.id, role, 'project.read').allowed) project = bySlug
        }
        if (!project) throw notFound('project')
        grantee = {granteeKind: 'project', granteeId: project.id}
      } else {
        const user = to.userId ? await store.users.get(to.userId) : to.email ? await store.users.getByEmail(to.email) : null
        if (!user) throw notFound('user')
        grantee = {granteeKind: 'user', granteeId: user.id}
      }
      await store.artifacts.grant(id, {...grantee, grantedBy: `${ctx.principal.kind}:${ctx.principal.id}`, createdAt: now()})
      return (await store.artifacts.grants(id)).map(grantView)
    },

    async revoke(ctx: CallContext, id: string, kind: 'user' | 'project', granteeId: string): Promise<GrantView[]> {
      await loadManageable(ctx, id, 'share')
      if (!(await store.artifacts.revoke(id, kind, granteeId))) throw notFound('grant')
      return (await store.artifacts.grants(id)).map(grantView)
    },
  }
}

const grantView = (g: GrantRow): GrantView => ({kind: g.granteeKind, id: g.granteeId, grantedBy: g.grantedBy, createdAt: g.createdAt})

export type ArtifactsService = ReturnType<typeof createArtifactsService>
