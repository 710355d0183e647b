import {describe, expect, it} from 'vitest'
import {canonicalKey, isNamedKey, NAMED_KEYS} from './keys.js'
import {decodeOctal, renderScreen} from './tmux-control.js'
import {directCommand, ENV_FD_LOADER, ENV_LOADER, envFileContent, hexKeyCommands, keepServerArgs, newSessionArgs, pasteArgs, sendKeysArgs, sessionNameFor, tmuxArg} from './tmux-args.js'

describe('named keys', () => {
  it('lists the allowed keys and accepts only them', () => {
    for (const k of ['Enter', 'Escape', 'Tab', 'Up', 'PageDown', 'BSpace', 'Delete', 'Space', 'F1', 'F12', 'C-a', 'C-z', 'M-x', 'M-Enter']) {
      expect(NAMED_KEYS).toContain(k)
      expect(isNamedKey(k)).toBe(true)
    }
    for (const k of ['kill-server', 'F13', 'C-1', 'C-M-x', 'Enter;', '', 'M-', 'hello']) expect(isNamedKey(k)).toBe(false)
  })

  it('canonicalises spelling where tmux is case-blind', () => {
    expect(canonicalKey('enter')).toBe('Enter')
    expect(canonicalKey('PAGEUP')).toBe('PageUp')
    expect(canonicalKey('c-C')).toBe('C-c')
    expect(canonicalKey('m-enter')).toBe('M-Enter')
    expect(canonicalKey('M-A')).toBeUndefined()
  })
})

describe('tmux argv', () => {
  it('escapes a trailing ; so tmux does not split the command there', () => {
    expect(tmuxArg('a;')).toBe('a\\;')
    expect(tmuxArg('a\\;')).toBe('a\\\\;')
    expect(tmuxArg(';')).toBe('\\;')
    expect(tmuxArg('a;b')).toBe('a;b')
  })

  it('names sessions after plain agent IDs only', () => {
    expect(sessionNameFor('0b6c1f7e-9d7a-4a51-8c7e-1f0d2f7a9b11')).toBe('svc-0b6c1f7e-9d7a-4a51-8c7e-1f0d2f7a9b11')
    for (const bad of ['', 'a:b', 'a.b', 'a b', '-x', 'x'.repeat(64)]) expect(() => sessionNameFor(bad)).toThrow(/cannot name a session/)
  })

  it('builds new-session with env, a direct command, remain-on-exit and pipe-pane', () => {
    const args = newSessionArgs({session: 'svc-a', cols: 80, rows: 24, env: {A: 'x;'}, command: ['/bin/sh', '-c', 'echo;'], workdir: '/w', logFile: "/tmp/it's #1.log"})
    expect(args).toEqual([
      'new-session', '-d', '-s', 'svc-a', '-x', '80', '-y', '24', '-c', '/w', '-e', 'A=x\\;', '--', '/bin/sh', '-c', 'echo\\;',
      ';', 'set-option', '-w', '-t', '=svc-a:', 'remain-on-exit', 'on',
      ';', 'pipe-pane', '-o', '-t', '=svc-a:', "cat >> '/tmp/it'\\''s ##1.log'",
    ])
    expect(() => newSessionArgs({session: 's', cols: 1, rows: 1, env: {'A B': 'x'}, command: ['x', 'y']})).toThrow(/not valid/)
    expect(directCommand(['claude'])).toEqual(['env', '--', 'claude'])
    const viaFile = newSessionArgs({session: 'svc-a', cols: 80, rows: 24, env: {TOKEN: 'secret'}, command: ['claude'], envFile: '/s/svc-a.env'})
    expect(viaFile.join(' ')).not.toContain('secret')
    expect(viaFile.slice(viaFile.indexOf('--'), viaFile.indexOf(';'))).toEqual(['--', '/bin/sh', '-c', ENV_LOADER, '/s/svc-a.env', 'env', '--', 'claude'])
    // A sandbox's command reads the file from fd 3 itself (sandbox/launcher.ts).
    const sandboxed = newSessionArgs({session: 'svc-a', cols: 80, rows: 24, env: {TOKEN: 'secret'}, command: ['/usr/bin/bwrap', '--', 'claude'], envFile: '/s/svc-a.env', cleanEnv: true})
    expect(sandboxed.join(' ')).not.toContain('secret')
    expect(sandboxed.slice(sandboxed.indexOf('--'), sandboxed.indexOf(';'))).toEqual(['--', '/bin/sh', '-c', ENV_FD_LOADER, '/s/svc-a.env', '/usr/bin/bwrap', '--', 'claude'])
    expect(envFileContent({A: "it's", B: '$(x)\nline'})).toBe(`A='it'\\''s'\nB='$(x)\nline'\n`)
    expect(() => envFileContent({'A-B': 'x'})).toThrow(/not valid/)
    expect(() => directCommand([])).toThrow(/empty/)
  })

  it('builds send-keys and paste', () => {
    expect(sendKeysArgs('=s:', {key: 'enter'})).toEqual(['send-keys', '-t', '=s:', 'Enter'])
    expect(sendKeysArgs('=s:', {literal: '-n ;'})).toEqual(['send-keys', '-t', '=s:', '-l', '--', '-n \\;'])
    expect(() => sendKeysArgs('=s:', {key: 'Nope'})).toThrow(/unknown key "Nope"/)
    expect(() => sendKeysArgs('=s:', {literal: ''})).toThrow(/empty/)
    expect(pasteArgs('=s:', 'b1')).toEqual(['load-buffer', '-b', 'b1', '-', ';', 'paste-buffer', '-p', '-d', '-b', 'b1', '-t', '=s:'])
    expect(hexKeyCommands('=s:', Buffer.from('a\r\x03'))).toEqual(['send-keys -t =s: -H 61 0d 03'])
    expect(hexKeyCommands('=s:', Buffer.alloc(5, 0x41), 2)).toHaveLength(3)
  })
})

describe('control mode decoding', () => {
  it('decodes octal escapes and keeps other bytes raw', () => {
    expect(decodeOctal(Buffer.from('a\\015\\012\\134b\\x\\0')).toString('latin1')).toBe('a\r\n\\b\\x\\0')
    expect(decodeOctal(Buffer.from('é\\033[0m')).toString('utf8')).toBe('é\x1b[0m')
  })

  it('renders a captured screen with clear, lines and cursor', () => {
    expect(renderScreen(['$ ls', 'a'], 3, 1, true).toString()).toBe('\x1b[0m\x1b[H\x1b[2J$ ls\r\na\x1b[0m\x1b[2;4H\x1b[?25h')
  })

})

describe('keeping svc\'s tmux server', () => {
  it('keepServerArgs: exit-empty off, and a job that turns it on once the broker is gone; the tmux path taken literally', () => {
    const args = keepServerArgs('/opt/t#1/tmux', 4242)
    expect(args.slice(0, 6)).toEqual(['set-option', '-s', 'exit-empty', 'off', ';', 'run-shell'])
    expect(args.at(-1)).toBe("cd / && tail --pid=4242 -f /dev/null 2>/dev/null; '/opt/t##1/tmux' set-option -s exit-empty on")
    for (const pid of [0, 1, -5, 1.5, NaN]) expect(() => keepServerArgs('tmux', pid)).toThrow(/not a process ID/)
  })
})
