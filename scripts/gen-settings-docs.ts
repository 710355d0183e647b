// Regenerates the key tables of docs/settings.md from the settings schema
// (src/config/schema/settings-schema.ts). Run: npm run docs:settings
import {readFileSync, writeFileSync} from 'node:fs'
import {replaceGeneratedBlock} from '../src/config/schema/docs.js'

const file = new URL('../docs/settings.md', import.meta.url)
const before = readFileSync(file, 'utf8')
const after = replaceGeneratedBlock(before)
if (after !== before) writeFileSync(file, after)
process.stdout.write(after === before ? 'docs/settings.md is up to date\n' : 'docs/settings.md updated\n')
