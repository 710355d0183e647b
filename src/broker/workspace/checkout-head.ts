/**
 * The branch and commit a project's checkout is on, read from its files: an agent's repository
 * can then be made from that commit while git checks the checkout (repository.ts, fromCheckout),
 * instead of after. Only a guess: git's answer decides, and what was made from a guess it does
 * not confirm is made again. Read only where the files are plain (`.git` a directory, HEAD naming
 * a branch, the branch a loose or packed ref holding a hash), else null and nothing is guessed.
 */
import {lstatSync, realpathSync} from 'node:fs'
import {join} from 'node:path'
// A regular file's text, no link followed, at most so many bytes, else null.
import {readSmallFile as readPlain} from '../hub-post.js'

export interface CheckoutGuess {
  /** The checkout's top directory and object directory (real paths), as git would name them. */
  root: string
  objects: string
  /** The branch HEAD names (without refs/heads/) and its commit. */
  branch: string
  commit: string
}

const HASH = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/
const BRANCH = /^[A-Za-z0-9._\/+@-]+$/

export function checkoutGuess(checkout: string): CheckoutGuess | null {
  try {
    const gitDir = join(checkout, '.git')
    if (!lstatSync(gitDir, {throwIfNoEntry: false})?.isDirectory()) return null
    const head = /^ref: refs\/heads\/(.+)\n$/.exec(readPlain(join(gitDir, 'HEAD'), 4096) ?? '')
    const branch = head?.[1]
    if (!branch || !BRANCH.test(branch) || branch.includes('..')) return null
    const ref = `refs/heads/${branch}`
    let commit = readPlain(join(gitDir, ref), 4096)?.trim()
    if (commit === undefined) {
      const packed = readPlain(join(gitDir, 'packed-refs'), 64 << 20) ?? ''
      commit = packed.split('\n').find((l) => l.endsWith(` ${ref}`))?.split(' ')[0]
    }
    if (!commit || !HASH.test(commit)) return null
    return {root: realpathSync(checkout), objects: realpathSync(join(gitDir, 'objects')), branch, commit}
  } catch {
    return null
  }
}
