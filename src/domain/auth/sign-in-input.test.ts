import {describe, expect, it} from 'vitest'
import {AppError} from '../../api/app-error.js'
import {challengeOf, cliTargetOf, returnToOf, withQuery} from './sign-in-input.js'

const HUB = 'https://hub.example.com'
const CHALLENGE = challengeOf('v'.repeat(43))

describe('returnToOf', () => {
  it.each([
    [undefined, '/'],
    ['', '/'],
    ['/', '/'],
    ['/projects', '/projects'],
    ['/projects?tab=mine#top', '/projects?tab=mine#top'],
    ['/a/../b', '/b'],
  ])('accepts %j as %j', (raw, expected) => {
    expect(returnToOf(raw, HUB)).toBe(expected)
  })

  it.each(['https://evil.example/', '//evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)', 'projects', '/a b', '/a\nb', '/' + 'x'.repeat(2048), 'http://hub.example.com/x'])(
    'refuses %j',
    (raw) => {
      expect(() => returnToOf(raw, HUB)).toThrow(AppError)
      try {
        returnToOf(raw, HUB)
      } catch (err) {
        expect((err as AppError).code).toBe('validation_error')
        expect((err as AppError).details).toEqual({fields: [{path: 'querystring.return_to', message: expect.any(String)}]})
      }
    },
  )
})

describe('cliTargetOf', () => {
  it('is null without CLI parameters', () => {
    expect(cliTargetOf({})).toBeNull()
  })

  it.each(['http://127.0.0.1:53682/callback', 'http://localhost:1/cb', 'http://[::1]:8080/'])('accepts loopback %s', (redirect) => {
    expect(cliTargetOf({cli_redirect: redirect, cli_state: 'state-123', cli_challenge: CHALLENGE})).toEqual({redirect: new URL(redirect).toString(), state: 'state-123', challenge: CHALLENGE})
  })

  it.each([
    ['https://127.0.0.1:1/cb', 'cli_redirect'],
    ['http://127.0.0.1/cb', 'cli_redirect'],
    ['http://127.0.0.2:1/cb', 'cli_redirect'],
    ['http://127.0.0.1.evil.example:1/cb', 'cli_redirect'],
    ['http://a:b@127.0.0.1:1/cb', 'cli_redirect'],
    ['http://127.0.0.1:1/cb#frag', 'cli_redirect'],
    ['not a url', 'cli_redirect'],
  ])('refuses redirect %s', (redirect, field) => {
    expect(() => cliTargetOf({cli_redirect: redirect, cli_state: 'state-123', cli_challenge: CHALLENGE})).toThrow(expect.objectContaining({code: 'validation_error', details: {fields: [expect.objectContaining({path: `querystring.${field}`})]}}))
  })

  it('refuses a short state, a malformed challenge and a partial set', () => {
    const ok = {cli_redirect: 'http://127.0.0.1:1/cb', cli_state: 'state-123', cli_challenge: CHALLENGE}
    expect(() => cliTargetOf({...ok, cli_state: 'short'})).toThrow(/cli_state/)
    expect(() => cliTargetOf({...ok, cli_challenge: CHALLENGE.slice(1)})).toThrow(/cli_challenge/)
    expect(() => cliTargetOf({cli_redirect: ok.cli_redirect})).toThrow(/cli_state, cli_challenge required/)
  })
})

it('challengeOf is the RFC 7636 S256 transform', () => {
  // Appendix B of RFC 7636.
  expect(challengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
})

it('withQuery adds parameters and keeps existing ones', () => {
  expect(withQuery('http://127.0.0.1:1/cb?x=1', {code: 'a b', state: 's'})).toBe('http://127.0.0.1:1/cb?x=1&code=a+b&state=s')
})
