/**
 * Host facts the sandbox policy needs: which system paths exist (and which are merged-/usr
 * symlinks), whether bwrap runs, and the `svc` command
 * an agent finds on its PATH.
 */
import {accessSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, readSync, realpathSync, writeFileSync} from 'node:fs'
import {basename, delimiter, dirname, isAbsolute, join, resolve} from 'node:path'
import {selfCommand} from '../self-command.js'
import {runCommand} from '../runtimes/run-command.js'
import {MASKED_FILES, SYSTEM_PATHS, type SystemPath} from './policy.js'

export function hostSystemPaths(root = '/'): {system: SystemPath[]; masked: string[]} {
  const system: SystemPath[] = []
  for (const p of SYSTEM_PATHS) {
    try {
      const st = lstatSync(join(root, p))
      if (st.isSymbolicLink()) system.push({path: p, symlinkTo: readlinkSync(join(root, p))})
      else if (st.isDirectory()) system.push({path: p})
    } catch {
      // Absent on this host (lib32 and friends): nothing to bind.
    }
  }
  return {system, masked: MASKED_FILES.filter((f) => existsSync(join(root, f)))}
}

/** An executable on PATH, as an absolute path (so the sandbox's own PATH does not decide). */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  const candidates = name.includes('/') ? [name] : (path || '/usr/bin:/bin').split(delimiter).filter(Boolean).map((dir) => join(dir, name))
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not here.
    }
  }
  return undefined
}

/** Why bwrap cannot run here (missing, or refused by the kernel or a policy), or null when it can. */
export async function bwrapProblem(bwrap: string): Promise<string | null> {
  if ((bwrapWorkedUntil.get(bwrap) ?? 0) > Date.now()) return null
  try {
    const r = await runCommand(bwrap, ['--ro-bind', '/', '/', '--unshare-pid', '--die-with-parent', '--cap-drop', 'ALL', '--', 'true'], {timeoutMs: 10_000})
    if (r.code === 0) bwrapWorkedUntil.set(bwrap, Date.now() + BWRAP_CHECK_TTL_MS)
    return r.code === 0 ? null : r.stderr || `bwrap exited with code ${r.code}`
  } catch (err) {
    return (err as Error).message
  }
}

/**
 * A bwrap that just worked is not tried again for a while: the check is a process spawned from
 * the broker's event loop on every agent start (tens of ms each when 20 agents start at once).
 * A failure is never remembered, so a fixed host is seen at the next start.
 */
const BWRAP_CHECK_TTL_MS = 5 * 60_000
const bwrapWorkedUntil = new Map<string, number>()

/**
 * `<binDir>/svc`: runs this same svc program (the single executable, or Node with the
 * checkout's bin/run.js) so hooks and `svc status` work inside. Returns the paths the agent
 * must read for it to run.
 */
export function writeSvcShim(binDir: string): {readable: string[]} {
  const cmd = selfCommand()
  mkdirSync(binDir, {recursive: true, mode: 0o755})
  const quoted = cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  writeFileSync(join(binDir, 'svc'), `#!/bin/sh\nexec ${quoted} "$@"\n`, {mode: 0o755})
  // A checkout's bin/run.js needs the whole checkout (dist/, node_modules/, package.json).
  const readable = cmd.length > 1 ? [cmd[0], dirname(dirname(cmd[1]))] : [cmd[0]]
  return {readable: [binDir, ...readable]}
}

/**
 * What the harness executable needs to be read inside: the file itself and, through its real
 * path, the `node_modules` tree it lives in (an npm-installed CLI loads sibling packages, such
 * as Claude Code's platform binary), else the directory holding it. System directories are
 * already there; a relative name adds nothing.
 */
export function executableReadable(executable: string): string[] {
  if (!executable.startsWith('/')) return []
  let real: string
  try {
    real = realpathSync(executable)
  } catch {
    return []
  }
  const i = real.lastIndexOf('/node_modules/')
  return [executable, i >= 0 ? real.slice(0, i + '/node_modules'.length) : dirname(real)]
}

/**
 * How to run `executable` when it is a Node script (`#!/usr/bin/env node`, or a node named
 * outright): this host's node as an absolute real path, then the shebang's own options; undefined
 * for anything else (a native binary such as Claude Code's or OpenCode's, a shell script). npm
 * installs Codex's and Gemini CLI's commands as such scripts, and a container image or a sandbox
 * need not have that node on its PATH: the broker runs the script with this node, mounted where
 * it is. Options are taken as the kernel would: `env -S` splits them, a node named outright gets
 * the rest of the line as one argument.
 */
export function nodeInterpreter(executable: string, path: string | undefined): string[] | undefined {
  if (!isAbsolute(executable)) return undefined
  let head: string
  try {
    const fd = openSync(executable, 'r')
    try {
      const buf = Buffer.alloc(256)
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8')
    } finally {
      closeSync(fd)
    }
  } catch {
    return undefined
  }
  if (!head.startsWith('#!')) return undefined
  const line = head.slice(2).split('\n')[0]!.trim()
  const cut = line.search(/\s/)
  const interpreter = cut < 0 ? line : line.slice(0, cut)
  const rest = cut < 0 ? '' : line.slice(cut).trim()
  let name: string
  let options: string[]
  if (basename(interpreter) === 'env') {
    // `env node`, `env -S node --flag`: the first word after env's own options.
    const words = rest.split(/\s+/).filter(Boolean)
    const at = words.findIndex((w) => !w.startsWith('-'))
    if (at < 0) return undefined
    name = words[at]!
    options = words[0] === '-S' ? words.slice(at + 1) : []
  } else {
    name = interpreter
    options = rest ? [rest] : []
  }
  if (!/^node(js)?$/.test(basename(name))) return undefined
  const found = findExecutable(name, path)
  try {
    return found ? [realpathSync(found), ...options] : undefined
  } catch {
    return undefined
  }
}
