/**
 * The built-in harnesses, by type. Adding a harness is one module file and one line here.
 * Settings `harness_configs` name a type; a type not listed here runs its executable (the type's
 * name) with the config's args and no hooks.
 */
import {claude} from './claude.js'
import {codex} from './codex.js'
import {gemini} from './gemini.js'
import {opencode} from './opencode.js'
import {shell} from './shell.js'
import type {HarnessModule} from './types.js'

export const HARNESSES: Readonly<Record<string, HarnessModule>> = Object.freeze({
  [shell.type]: shell,
  [claude.type]: claude,
  [codex.type]: codex,
  [gemini.type]: gemini,
  [opencode.type]: opencode,
})

export function harnessModule(type: string): HarnessModule | undefined {
  return Object.prototype.hasOwnProperty.call(HARNESSES, type) ? HARNESSES[type] : undefined
}
