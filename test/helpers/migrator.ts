/**
 * A process that migrates a SQLite database file when told to: it opens the file, prints
 * `ready`, waits for a line on stdin, migrates, and prints what it applied as JSON. Two of them,
 * told at once, are two `svc` processes starting on one file at the same moment.
 */
import {createInterface} from 'node:readline'
import {createDb} from '../../src/store/create-db.js'
import {migrate} from '../../src/store/migrate.js'

const h = await createDb({driver: 'sqlite', url: process.argv[2]})
process.stdout.write('ready\n')
const lines = createInterface({input: process.stdin})
await new Promise((resolve) => lines.once('line', resolve))
lines.close()
const {applied} = await migrate(h)
process.stdout.write(`${JSON.stringify(applied)}\n`)
await h.close()
