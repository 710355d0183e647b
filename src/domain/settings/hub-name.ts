import type {Tree} from './keys.js'

/** `server.hub.hub_name` of the resolved settings; '' when unset or not a string. */
export function hubNameOf(resolved: Tree): string {
  const name = (resolved as {server?: {hub?: {hub_name?: unknown}}}).server?.hub?.hub_name
  return typeof name === 'string' ? name : ''
}
