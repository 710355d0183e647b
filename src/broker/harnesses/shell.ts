import type {HarnessModule} from './types.js'

/** A plain interactive bash: an agent with no model behind it (tests, scripted work). */
export const shell: HarnessModule = {
  type: 'shell',
  displayName: 'Shell',
  executable: '/bin/bash',
  install: 'bash is part of every Debian system (apt-get install bash)',
  auth: {default: 'none', types: {none: {secrets: [], description: 'no credentials'}}},
  args: () => ['--noprofile', '--norc', '-i'],
  taskInArgs: false,
  env: () => ({PS1: '$ '}),
  prepare: async () => {},
  onHook: () => null,
}
