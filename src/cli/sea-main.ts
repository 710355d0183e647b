// The single executable's main bundle (scripts/build-binary.mjs bundles it as CommonJS, as Node
// SEA requires). Inside the executable process.argv is [svc, svc, ...args].
// The build also loads this bundle once to record a V8 code cache: it sets
// __SVC_CODE_CACHE_BUILD__ and calls main itself with a few sample command lines.
import {main} from './entry.js'

export {main}

if (!(globalThis as {__SVC_CODE_CACHE_BUILD__?: boolean}).__SVC_CODE_CACHE_BUILD__) void main(process.argv.slice(2))
