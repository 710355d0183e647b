// A settings-file writer process for the concurrency tests (run with `node --import tsx`).
//   settings-writer.ts <file> distinct <name> <count>: sets writers.<name>.k<i> = i, count times
//   settings-writer.ts <file> forever: sets kill.counter = i and kill.items.k<i> in one edit, forever
import {readFileSync} from 'node:fs'
import {parse} from 'yaml'
import {editSettingsFile} from '../../src/config/settings-file-edit.js'

const [file, mode, name, count] = process.argv.slice(2)

if (mode === 'distinct') {
  for (let i = 0; i < Number(count); i++) await editSettingsFile(file, [{path: ['writers', name, `k${i}`], value: i}])
} else {
  const start = ((parse(readFileSync(file, 'utf8'))?.kill?.counter as number | undefined) ?? -1) + 1
  process.stdout.write('ready\n')
  for (let i = start; ; i++) {
    await editSettingsFile(file, [
      {path: ['kill', 'counter'], value: i},
      {path: ['kill', 'items', `k${i}`], value: `item ${i} `.repeat(20)},
    ])
  }
}
