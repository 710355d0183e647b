/** `svc agent create`'s budget flags (Teams, "Budgets") as the create body's `limits`. */
import {Flags} from '@oclif/core'

// Apart, so the quick path of `svc agent create` (quick-main.ts) reads them without oclif.

export const limitFlags = {
  'max-turns': Flags.integer({description: 'Turns this agent and all its descendants may take together (limits.maxTurns).', min: 1}),
  'max-model-calls': Flags.integer({description: 'Model calls of this agent and all its descendants together (limits.maxModelCalls).', min: 1}),
  'max-duration': Flags.string({description: 'Run time of this agent and its team from its creation: 90s, 45m, 2h or seconds (limits.maxDurationSeconds).'}),
  'max-cost': Flags.string({description: 'Cost in USD this agent and all its descendants may spend together, as their harnesses report it (limits.maxCostUsd).'}),
  'max-children': Flags.integer({description: 'Direct children this agent may ever create (limits.maxChildren).', min: 0}),
  'max-depth': Flags.integer({description: 'Generations below this agent (1: children, no grandchildren) (limits.maxDepth).', min: 0}),
}
