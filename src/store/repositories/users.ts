import type {Kysely, Selectable} from 'kysely'
import type {Database, UsersTable} from '../schema.js'
import {translateDbError} from '../db-errors.js'
import {isHubRole, type HubRole} from '../../domain/authz/hub-roles.js'

export type UserStatus = 'active' | 'suspended'

export interface User {
  id: string
  email: string
  displayName: string
  status: UserStatus
  systemAdmin: boolean
  /** Built-in Hub role; null: none (a stored name this build does not know reads as none). */
  hubRole: HubRole | null
  createdAt: string
  updatedAt: string
  lastLoginAt: string | null
}

const toUser = (r: Selectable<UsersTable>): User => ({
  id: r.id,
  email: r.email,
  displayName: r.display_name,
  status: r.status as UserStatus,
  systemAdmin: r.system_admin === 1,
  hubRole: isHubRole(r.hub_role) ? r.hub_role : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastLoginAt: r.last_login_at,
})

export interface NewUser {
  id: string
  email: string
  displayName: string
  systemAdmin: boolean
  oidcIssuer?: string | null
  oidcSubject?: string | null
  now: string
}

export const usersRepo = (db: Kysely<Database>) => ({
  async get(id: string): Promise<User | null> {
    const r = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
    return r ? toUser(r) : null
  },
  async getByEmail(email: string): Promise<User | null> {
    const r = await db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst()
    return r ? toUser(r) : null
  },
  async getByOidc(issuer: string, subject: string): Promise<User | null> {
    const r = await db.selectFrom('users').selectAll().where('oidc_issuer', '=', issuer).where('oidc_subject', '=', subject).executeTakeFirst()
    return r ? toUser(r) : null
  },
  async list(): Promise<User[]> {
    const rows = await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute()
    return rows.map(toUser)
  },
  /** Every user's status by ID (the delegation planner's root checks). */
  async statuses(): Promise<Map<string, {status: string}>> {
    const rows = await db.selectFrom('users').select(['id', 'status']).execute()
    return new Map(rows.map((r) => [r.id, {status: r.status}]))
  },
  async insert(u: NewUser): Promise<User> {
    try {
      const r = await db
        .insertInto('users')
        .values({
          id: u.id,
          email: u.email.toLowerCase(),
          display_name: u.displayName,
          status: 'active',
          system_admin: u.systemAdmin ? 1 : 0,
          hub_role: null,
          oidc_issuer: u.oidcIssuer ?? null,
          oidc_subject: u.oidcSubject ?? null,
          created_at: u.now,
          updated_at: u.now,
          last_login_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      return toUser(r)
    } catch (err) {
      translateDbError(err, 'user')
    }
  },
  async update(id: string, patch: Partial<{status: UserStatus; systemAdmin: boolean; hubRole: HubRole | null; displayName: string; lastLoginAt: string; oidcIssuer: string; oidcSubject: string}>, now: string): Promise<User | null> {
    const r = await db
      .updateTable('users')
      .set({
        ...(patch.status !== undefined && {status: patch.status}),
        ...(patch.systemAdmin !== undefined && {system_admin: patch.systemAdmin ? 1 : 0}),
        ...(patch.hubRole !== undefined && {hub_role: patch.hubRole}),
        ...(patch.displayName !== undefined && {display_name: patch.displayName}),
        ...(patch.lastLoginAt !== undefined && {last_login_at: patch.lastLoginAt}),
        ...(patch.oidcIssuer !== undefined && {oidc_issuer: patch.oidcIssuer}),
        ...(patch.oidcSubject !== undefined && {oidc_subject: patch.oidcSubject}),
        updated_at: now,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return r ? toUser(r) : null
  },
  /** Marks every user whose e-mail is listed as a system admin; returns how many changed. */
  async promoteAdmins(emails: string[], now: string): Promise<number> {
    if (emails.length === 0) return 0
    const res = await db
      .updateTable('users')
      .set({system_admin: 1, updated_at: now})
      .where('email', 'in', emails.map((e) => e.toLowerCase()))
      .where('system_admin', '=', 0)
      .executeTakeFirst()
    return Number(res.numUpdatedRows)
  },
})

export type UsersRepo = ReturnType<typeof usersRepo>
