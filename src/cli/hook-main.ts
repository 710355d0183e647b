// Entry of dist/hook.js: bin/run.js loads it for `svc hook <harness> <event> [payload]`.
import {runHook} from './hook-entry.js'

export const main = runHook
