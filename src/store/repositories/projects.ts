import type {Kysely, Selectable} from 'kysely'
import type {Database, ProjectsTable} from '../schema.js'
import {translateDbError} from '../db-errors.js'

export interface Project {
  id: string
  name: string
  slug: string
  /** The normalised remote (`github.com/org/repo`): one key however the remote is spelled. */
  gitRemote: string | null
  /** The remote as registered, without credentials: what a broker clones. */
  cloneUrl?: string | null
  /** Absolute path of the project's git checkout on the co-located broker's machine. */
  localPath: string | null
  description: string
  /** Broker that runs the project's agents unless a create names one. */
  defaultBrokerId: string | null
  createdBy: string
  createdAt: string
  updatedAt: string
}

export interface Member {
  userId: string
  email: string
  displayName: string
  role: string
  createdAt: string
}

const toProject = (r: Selectable<ProjectsTable>): Project => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  gitRemote: r.git_remote,
  cloneUrl: r.clone_url ?? null,
  localPath: r.local_path ?? null,
  description: r.description,
  defaultBrokerId: r.default_broker_id,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

export const projectsRepo = (db: Kysely<Database>) => ({
  async get(id: string): Promise<Project | null> {
    const r = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toProject(r) : null
  },
  async getBySlug(slug: string): Promise<Project | null> {
    const r = await db.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst()
    return r ? toProject(r) : null
  },
  async getByRemote(remote: string): Promise<Project | null> {
    const r = await db.selectFrom('projects').selectAll().where('git_remote', '=', remote).executeTakeFirst()
    return r ? toProject(r) : null
  },
  async slugExists(slug: string): Promise<boolean> {
    const r = await db.selectFrom('projects').select('id').where('slug', '=', slug).executeTakeFirst()
    return !!r
  },
  /** Projects with `userId`'s role in each; only those it is a member of when `membersOnly`. Newest first. */
  async list(opts: {userId: string; membersOnly: boolean; onlyId?: string}): Promise<Array<Project & {role: string | null}>> {
    let q = db
      .selectFrom('projects')
      .leftJoin('project_members as m', (j) => j.onRef('m.project_id', '=', 'projects.id').on('m.user_id', '=', opts.userId))
      .selectAll('projects')
      .select('m.role')
    if (opts.membersOnly) q = q.where('m.user_id', 'is not', null)
    if (opts.onlyId) q = q.where('projects.id', '=', opts.onlyId)
    const rows = await q.orderBy('projects.created_at', 'desc').orderBy('projects.id').execute()
    return rows.map((r) => ({...toProject(r), role: r.role ?? null}))
  },
  /** The project linked to a checkout (a project registered without a remote is found by it). */
  async getByLocalPath(localPath: string): Promise<Project | null> {
    const r = await db.selectFrom('projects').selectAll().where('local_path', '=', localPath).orderBy('created_at').executeTakeFirst()
    return r ? toProject(r) : null
  },
  async insert(p: Project): Promise<Project> {
    try {
      const r = await db
        .insertInto('projects')
        .values({
          id: p.id,
          name: p.name,
          slug: p.slug,
          git_remote: p.gitRemote,
          clone_url: p.cloneUrl ?? null,
          local_path: p.localPath ?? null,
          description: p.description,
          default_broker_id: p.defaultBrokerId,
          created_by: p.createdBy,
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      return toProject(r)
    } catch (err) {
      translateDbError(err, 'project')
    }
  },
  async update(id: string, patch: Partial<{name: string; description: string; gitRemote: string | null; cloneUrl: string | null; localPath: string | null; defaultBrokerId: string | null}>, now: string): Promise<Project | null> {
    try {
      const r = await db
        .updateTable('projects')
        .set({
          ...(patch.name !== undefined && {name: patch.name}),
          ...(patch.description !== undefined && {description: patch.description}),
          ...(patch.gitRemote !== undefined && {git_remote: patch.gitRemote}),
          ...(patch.cloneUrl !== undefined && {clone_url: patch.cloneUrl}),
          ...(patch.localPath !== undefined && {local_path: patch.localPath}),
          ...(patch.defaultBrokerId !== undefined && {default_broker_id: patch.defaultBrokerId}),
          updated_at: now,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
      return r ? toProject(r) : null
    } catch (err) {
      translateDbError(err, 'project')
    }
  },
  async delete(id: string): Promise<boolean> {
    const res = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst()
    return Number(res.numDeletedRows) > 0
  },
  async roleOf(projectId: string, userId: string): Promise<string | null> {
    const r = await db.selectFrom('project_members').select('role').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst()
    return r?.role ?? null
  },
  async members(projectId: string): Promise<Member[]> {
    const rows = await db
      .selectFrom('project_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.user_id', 'u.email', 'u.display_name', 'm.role', 'm.created_at'])
      .where('m.project_id', '=', projectId)
      .orderBy('m.created_at')
      .orderBy('m.user_id')
      .execute()
    return rows.map((r) => ({userId: r.user_id, email: r.email, displayName: r.display_name, role: r.role, createdAt: r.created_at}))
  },
  async countMembers(projectId: string, role?: string): Promise<number> {
    let q = db.selectFrom('project_members').select((eb) => eb.fn.countAll().as('n')).where('project_id', '=', projectId)
    if (role) q = q.where('role', '=', role)
    const r = await q.executeTakeFirstOrThrow()
    return Number(r.n)
  },
  /** Adds or changes a membership. */
  async setMember(projectId: string, userId: string, role: string, now: string): Promise<void> {
    try {
      await db
        .insertInto('project_members')
        .values({project_id: projectId, user_id: userId, role, created_at: now})
        .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet({role}))
        .execute()
    } catch (err) {
      translateDbError(err, 'membership')
    }
  },
  async removeMember(projectId: string, userId: string): Promise<boolean> {
    const res = await db.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst()
    return Number(res.numDeletedRows) > 0
  },
})

export type ProjectsRepo = ReturnType<typeof projectsRepo>
