// The single executable's main script (scripts/build-binary.mjs bundles it as CommonJS, as
// Node SEA requires). Inside the executable process.argv is [svc, svc, ...args].
import {main} from './entry.js'

void main(process.argv.slice(2))
