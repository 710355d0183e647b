import {expect, it} from 'vitest'
import {browserCommand} from './browser.js'

const URL_ = 'http://127.0.0.1:9810/api/v1/auth/login?a=1&b=2'

it('SVC_BROWSER runs through the shell with the URL as a separate argument', () => {
  expect(browserCommand(URL_, {SVC_BROWSER: 'firefox --new-window'}, 'linux')).toEqual({command: '/bin/sh', args: ['-c', 'firefox --new-window "$1"', 'svc-browser', URL_]})
})

it('uses open on macOS and xdg-open only with a graphical session elsewhere', () => {
  expect(browserCommand(URL_, {}, 'darwin')).toEqual({command: 'open', args: [URL_]})
  expect(browserCommand(URL_, {DISPLAY: ':0'}, 'linux')).toEqual({command: 'xdg-open', args: [URL_]})
  expect(browserCommand(URL_, {WAYLAND_DISPLAY: 'wayland-0'}, 'freebsd')).toEqual({command: 'xdg-open', args: [URL_]})
  expect(browserCommand(URL_, {}, 'linux')).toBeNull()
  expect(browserCommand(URL_, {DISPLAY: ''}, 'linux')).toBeNull()
})

it('escapes & for start on Windows', () => {
  expect(browserCommand(URL_, {}, 'win32')!.args.at(-1)).toBe('http://127.0.0.1:9810/api/v1/auth/login?a=1^&b=2')
})
