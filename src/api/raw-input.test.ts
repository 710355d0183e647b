import {describe, expect, it} from 'vitest'
import {AppError} from './app-error.js'
import {carriesRaw, INGRESS, KEYS_ROUTE, logRawRefusal, PROJECT_KEYS_ROUTE, rawRefusal} from './raw-input.js'

const NAMES = ['raw', 'RAW', 'Raw', 'rAw', 'raW']
const VALUES: unknown[] = [true, false, null, 0, 1, 'x', '', {}, {a: 1}, [], [1]]

describe('carriesRaw', () => {
  it.each(NAMES)('a %s field at the top level, with any value', (name) => {
    for (const v of VALUES) expect(carriesRaw({message: 'hi', [name]: v})).toBe(true)
    expect(carriesRaw({[name]: undefined})).toBe(true)
  })

  it.each(NAMES)('a %s field inside message, structured_message or payload (any capitalisation of the container)', (name) => {
    for (const container of ['message', 'structured_message', 'payload', 'Message', 'STRUCTURED_MESSAGE']) {
      for (const v of VALUES) expect(carriesRaw({[container]: {text: 'hi', [name]: v}})).toBe(true)
    }
  })

  it('a raw field one level further, in payload.message or payload.structured_message', () => {
    expect(carriesRaw({payload: {message: {text: 'hi', raw: true}}})).toBe(true)
    expect(carriesRaw({payload: {structured_message: {text: 'hi', Raw: null}}})).toBe(true)
  })

  it('a body that did not parse: a "raw": key anywhere in its text counts, in any case', () => {
    expect(carriesRaw(undefined, '{"message":"hi","raw": tru')).toBe(true)
    expect(carriesRaw(undefined, '{"message":{"text":"hi","RAW" : }')).toBe(true)
    expect(carriesRaw(undefined, '{"message":"hi",')).toBe(false)
    expect(carriesRaw(undefined, '')).toBe(false)
    expect(carriesRaw(undefined)).toBe(false)
    expect(carriesRaw(undefined, null)).toBe(false)
  })

  it('ordinary bodies do not carry raw, even when the text mentions it', () => {
    expect(carriesRaw({message: 'send "raw": true please'})).toBe(false)
    expect(carriesRaw({message: 'hi', plain: true, interrupt: false})).toBe(false)
    expect(carriesRaw({structured_message: {text: 'hi', rawness: 1, draw: 2}})).toBe(false)
    expect(carriesRaw({message: 'hi', raws: true, rawInput: true})).toBe(false)
    // Only the parsed body is judged when it parsed.
    expect(carriesRaw({message: 'x'}, '{"message":"x"}')).toBe(false)
    expect(carriesRaw({other: {raw: true}})).toBe(false)
  })

  it('non-object bodies carry no raw field', () => {
    for (const body of [null, 1, 'raw', true, [{raw: true}], ['raw']]) expect(carriesRaw(body)).toBe(false)
  })

  it('a body that arrived as text (text/plain) is judged by its text', () => {
    expect(carriesRaw('{"message":"hi","Raw":true}')).toBe(true)
    expect(carriesRaw('{"message":"hi"}')).toBe(false)
  })
})

describe('rawRefusal and its log line', () => {
  it('is a 422 raw_input_removed with operation_id, ingress and replacement', () => {
    const err = rawRefusal(INGRESS.brokerInbound)
    expect(err).toBeInstanceOf(AppError)
    expect(err.code).toBe('raw_input_removed')
    expect(err.status).toBe(422)
    expect(err.details).toEqual({operation_id: expect.stringMatching(/^op_[0-9a-f]{16}$/), ingress: 'broker_inbound', replacement: KEYS_ROUTE})
    expect(rawRefusal(INGRESS.projectAgentMessage, PROJECT_KEYS_ROUTE).details?.replacement).toBe(PROJECT_KEYS_ROUTE)
    expect(rawRefusal(INGRESS.agentMessage).details?.operation_id).not.toBe(rawRefusal(INGRESS.agentMessage).details?.operation_id)
  })

  it('logs one content-free line naming the route and the ingress', () => {
    const lines: Array<[object, string]> = []
    const err = rawRefusal(INGRESS.schedule)
    logRawRefusal({info: (obj, msg) => lines.push([obj, msg])}, err)
    expect(lines).toEqual([[{route: 'message_raw_removed', ingress: 'schedule', operation_id: err.details?.operation_id}, 'raw message input refused']])
  })
})
