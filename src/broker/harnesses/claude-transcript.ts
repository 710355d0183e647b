/**
 * What svc reads from a Claude Code session transcript (the JSONL file a hook payload names in
 * `transcript_path`): the session's usage, and whether the turn that just ended is on disk yet.
 */
import {createReadStream} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {createInterface} from 'node:readline'
import type {SessionUsage} from './types.js'

/** The last user or assistant entry of a transcript: who spoke, why the model stopped, its text. */
interface LastEntry {
  role: 'user' | 'assistant'
  stopReason?: string
  text: string
}

interface Transcript {
  usage: SessionUsage
  last?: LastEntry
}

// Lines that may be a user or assistant entry; parsed only at the end, newest first, so a long
// transcript is not parsed line by line just to find its last entry.
const CANDIDATES = 32

async function readTranscript(transcriptPath: string, sessionId?: string): Promise<Transcript | undefined> {
  const seen = new Set<string>()
  const usage: SessionUsage = {sessionId: sessionId ?? '', inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, modelCalls: 0}
  const candidates: string[] = []
  try {
    const lines = createInterface({input: createReadStream(transcriptPath, {encoding: 'utf8'}), crlfDelay: Infinity})
    for await (const line of lines) {
      if (line.includes('"type":"user"') || line.includes('"type":"assistant"')) {
        candidates.push(line)
        if (candidates.length > CANDIDATES) candidates.shift()
      }
      if (!line.includes('"usage"')) continue
      let entry: any
      try {
        entry = JSON.parse(line)
      } catch {
        continue // a line being written right now
      }
      const m = entry?.message
      if (entry?.type !== 'assistant' || !m?.usage || entry.isApiErrorMessage) continue
      const key = m.id ?? entry.requestId ?? entry.uuid
      if (key && seen.has(key)) continue
      if (key) seen.add(key)
      usage.inputTokens += Number(m.usage.input_tokens) || 0
      usage.outputTokens += Number(m.usage.output_tokens) || 0
      usage.cacheReadTokens! += Number(m.usage.cache_read_input_tokens) || 0
      usage.cacheWriteTokens! += Number(m.usage.cache_creation_input_tokens) || 0
      usage.modelCalls++
      if (typeof m.model === 'string' && m.model !== '<synthetic>') usage.model = m.model
      if (!usage.sessionId && typeof entry.sessionId === 'string') usage.sessionId = entry.sessionId
    }
  } catch {
    return undefined
  }
  return {usage, last: lastEntry(candidates)}
}

function lastEntry(candidates: string[]): LastEntry | undefined {
  for (let i = candidates.length - 1; i >= 0; i--) {
    let entry: any
    try {
      entry = JSON.parse(candidates[i]!)
    } catch {
      continue
    }
    if (entry?.type !== 'user' && entry?.type !== 'assistant') continue
    const content = entry.message?.content
    const text = typeof content === 'string' ? content : Array.isArray(content) ? content.filter((b: any) => b?.type === 'text' && typeof b.text === 'string').map((b: any) => b.text).join('\n') : ''
    return {role: entry.type, stopReason: typeof entry.message?.stop_reason === 'string' ? entry.message.stop_reason : undefined, text}
  }
  return undefined
}

/**
 * The cumulative usage of one Claude Code session, from its transcript: the assistant entries'
 * `message.usage` summed. Claude Code writes one entry per content block of a streamed message,
 * each with that message's usage, so a message is counted once (by `message.id`). Resolves
 * undefined when the file cannot be read.
 */
export async function claudeSessionUsage(transcriptPath: string, sessionId?: string): Promise<SessionUsage | undefined> {
  const t = await readTranscript(transcriptPath, sessionId)
  return t?.usage.sessionId ? t.usage : undefined
}

/**
 * Whether the transcript holds the end of the turn a `Stop` hook announces: its last entry is the
 * model's closing answer (not a tool call, not a tool result or prompt waiting for the model) and,
 * when the payload carries `last_assistant_message`, that answer's text.
 */
function turnOnDisk(last: LastEntry | undefined, lastMessage: unknown): boolean {
  if (last?.role !== 'assistant' || last.stopReason === 'tool_use') return false
  if (typeof lastMessage !== 'string' || !lastMessage.trim()) return true
  const want = lastMessage.trim()
  const have = last.text.trim()
  return have !== '' && (want.endsWith(have) || have.endsWith(want))
}

/** How long a `Stop` hook waits for Claude Code to write the turn's end to its transcript. */
export const TRANSCRIPT_SETTLE_MS = 2000
const POLL_MS = 50

/**
 * The usage to send with a hook's report (the module's `usageOf`): at the end of a turn (`Stop`,
 * `StopFailure`), the session's totals from the transcript the payload names; otherwise none.
 * Claude Code runs its Stop hooks before it has flushed the turn's last entries to the transcript
 * (anthropics/claude-code#15812), so on `Stop` this rereads until the turn's end is on disk, for
 * at most TRANSCRIPT_SETTLE_MS (then it reports what is there).
 */
export async function claudeHookUsage(event: string, payload: unknown, settleMs = TRANSCRIPT_SETTLE_MS): Promise<SessionUsage | undefined> {
  const p = (payload && typeof payload === 'object' ? payload : {}) as Record<string, any>
  if (event !== 'Stop' && event !== 'StopFailure') return undefined
  if (typeof p.transcript_path !== 'string' || !p.transcript_path) return undefined
  const sessionId = typeof p.session_id === 'string' ? p.session_id : undefined
  const deadline = Date.now() + (event === 'Stop' ? settleMs : 0)
  for (;;) {
    const t = await readTranscript(p.transcript_path, sessionId)
    if (!t) return undefined
    if (Date.now() >= deadline || turnOnDisk(t.last, p.last_assistant_message)) return t.usage.sessionId ? t.usage : undefined
    await sleep(POLL_MS)
  }
}
