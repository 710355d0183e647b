// Puts `opencode` into node_modules/.bin for the test suite.
// Why: the `opencode-ai` wrapper lists twelve platform packages as optional dependencies and
// this machine's registry serves only the linux-x64 ones, so a lock file made with it fails
// `npm ci` ("Missing: opencode-darwin-arm64@ from lock file"). The project depends on the
// platform package itself, which carries the binary but declares no `bin`; this links it.
// Users install OpenCode their own way (`npm i -g opencode-ai`); this is only for svc's tests.
import {existsSync, mkdirSync, rmSync, symlinkSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const binDir = join(root, 'node_modules', '.bin')
const links = {opencode: join(root, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode')}

for (const [name, target] of Object.entries(links)) {
  // Another platform (no linux-x64 package installed): the OpenCode tests report it missing.
  if (!existsSync(target)) continue
  mkdirSync(binDir, {recursive: true})
  const link = join(binDir, name)
  rmSync(link, {force: true})
  symlinkSync(relative(binDir, target), link)
}
