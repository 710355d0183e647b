import type {Document, Node} from 'yaml'
import {AppError} from '../api/app-error.js'

/**
 * Bound on YAML alias expansion in every settings-file read (the `yaml` library's
 * `maxAliasCount`: alias uses times the aliases inside what they point at). Ordinary files with
 * a few hundred aliases stay far below; a "billion laughs" block passes it within its first
 * levels, so it is refused at once instead of being expanded for seconds.
 */
export const MAX_YAML_ALIASES = 10_000

export const aliasLimitError = () =>
  new AppError('yaml_alias_limit', `the settings file expands YAML aliases more than ${MAX_YAML_ALIASES} times (a guard against alias bombs); reduce the aliases in the file by hand`, {
    maxAliasCount: MAX_YAML_ALIASES,
  })

/** `node.toJS` with the bound; too many aliases throw 422 `yaml_alias_limit`, never a bare ReferenceError. */
export function yamlToJS(node: Document | Node, doc?: Document): unknown {
  try {
    return doc ? (node as Node).toJS(doc, {maxAliasCount: MAX_YAML_ALIASES}) : (node as Document).toJS({maxAliasCount: MAX_YAML_ALIASES})
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message)) throw aliasLimitError()
    throw err
  }
}
