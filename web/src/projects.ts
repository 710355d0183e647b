import type {ProjectDto as Project} from '../../src/api/dto.js'
import {api, ApiError} from './api.js'

export type {Project}

/** A project the caller can read, or null when the Hub answers 404 (unknown or unreadable). */
export async function projectOrNull(id: string): Promise<Project | null> {
  try {
    return (await api<{project: Project}>('GET', `/api/v1/projects/${encodeURIComponent(id)}`)).project
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null
    throw err
  }
}

/** Names of the projects the caller can read, by ID (a list of every agent shows them). */
export async function projectNames(): Promise<Map<string, string>> {
  const {projects} = await api<{projects: Project[]}>('GET', '/api/v1/projects')
  return new Map(projects.map((p) => [p.id, p.name]))
}
