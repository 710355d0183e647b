import {api} from './api.js'

let enabled: Promise<boolean> | null = null

/**
 * Readiness performance marks (`profiling.readiness_marks`): when the Hub turns them on, the
 * client marks `svc:<name>:ready` once a view has its data, for tests and tools to read with
 * performance.getEntriesByName.
 */
export async function markReady(name: string): Promise<void> {
  enabled ??= api<{readinessMarks: boolean}>('GET', '/api/v1/profiling').then(
    (r) => r.readinessMarks === true,
    () => false,
  )
  if (await enabled) performance.mark(`svc:${name}:ready`)
}

/** Forgets the cached setting (after sign-in or a profiling change). */
export function resetReadiness() {
  enabled = null
}
