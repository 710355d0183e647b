import {AppError} from '../../api/app-error.js'

/** A validated message request body: `{message}` or `{structured_message}`, `interrupt?`, `plain?`. */
export interface MessageBody {
  text: string
  structured: Record<string, unknown> | null
  interrupt: boolean
  plain: boolean
}

export const MAX_MESSAGE_CHARS = 100_000

const bad = (path: string, message: string) => new AppError('validation_error', `${path} ${message}`, {fields: [{path, message}]})
const KNOWN = new Set(['message', 'structured_message', 'interrupt', 'plain'])

/**
 * Checks a message body after the raw-input guard. `message` is text (or an object with a `text`
 * field); `structured_message` is an object whose `text` is delivered and whole is stored.
 */
export function parseMessageBody(body: unknown, extraKeys: readonly string[] = []): MessageBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('invalid_request', 'the request body must be a JSON object with `message` or `structured_message`')
  const b = body as Record<string, unknown>
  for (const k of Object.keys(b)) if (!KNOWN.has(k) && !extraKeys.includes(k)) throw bad(k, 'is not a known field')
  const hasM = b.message !== undefined
  const hasS = b.structured_message !== undefined
  if (hasM === hasS) throw bad('message', 'give exactly one of message or structured_message')
  let text: string
  let structured: Record<string, unknown> | null = null
  if (hasM) {
    const m = b.message
    if (typeof m === 'string') text = m
    else if (m && typeof m === 'object' && !Array.isArray(m) && typeof (m as {text?: unknown}).text === 'string') {
      text = (m as {text: string}).text
      structured = m as Record<string, unknown>
    } else throw bad('message', 'must be text, or an object with a text field')
  } else {
    const s = b.structured_message
    if (!s || typeof s !== 'object' || Array.isArray(s) || typeof (s as {text?: unknown}).text !== 'string') throw bad('structured_message', 'must be an object with a text field')
    structured = s as Record<string, unknown>
    text = (s as {text: string}).text
  }
  if (text.length === 0) throw bad(hasM ? 'message' : 'structured_message.text', 'must not be empty')
  if (text.length > MAX_MESSAGE_CHARS) throw bad(hasM ? 'message' : 'structured_message.text', `may hold at most ${MAX_MESSAGE_CHARS} characters`)
  for (const flag of ['interrupt', 'plain'] as const) if (b[flag] !== undefined && typeof b[flag] !== 'boolean') throw bad(flag, 'must be true or false')
  return {text, structured, interrupt: b.interrupt === true, plain: b.plain === true}
}
