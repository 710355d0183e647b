/**
 * Agent states a notification channel may subscribe to: every activity and phase, and
 * `harness_error` (a running agent's harness reported an API, auth or network failure: the
 * agent's `error`), and `approval_requested` (a harness asks permission; its payload adds `approval`). Part of the wire contract: the settings schema validates `events` against it.
 */
export const NOTIFY_STATES = ['idle', 'thinking', 'executing', 'waiting_for_input', 'completed', 'limits_exceeded', 'offline', 'created', 'provisioning', 'cloning', 'running', 'stopped', 'error', 'harness_error', 'approval_requested'] as const

/** What a channel without `events` is sent. */
export const DEFAULT_NOTIFY_EVENTS = ['waiting_for_input', 'idle', 'completed', 'error', 'limits_exceeded', 'harness_error'] as const
