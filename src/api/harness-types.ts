/**
 * The built-in harness types (CONTRACT.md, "Real coding agents"): each is also a harness config
 * of the same name, usable with no settings. A settings entry `harness_configs.<type>` changes
 * that config and is of that type unless it says otherwise. The broker's registry
 * (src/broker/harnesses/registry.ts) holds one module per type; a test keeps the two equal.
 */
export const BUILTIN_HARNESS_TYPES = ['shell', 'claude', 'codex', 'gemini', 'opencode'] as const

export const isBuiltinHarnessType = (name: string): boolean => (BUILTIN_HARNESS_TYPES as readonly string[]).includes(name)
