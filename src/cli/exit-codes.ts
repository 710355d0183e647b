import {AppError} from '../api/app-error.js'

/** Exit codes of CONTRACT.md. */
export const EXIT = {ok: 0, failure: 1, usage: 2, unreachable: 3} as const

export function exitCodeOf(err: AppError): number {
  switch (err.code) {
    case 'usage_error':
    case 'interactive_required':
    case 'config_invalid':
      return EXIT.usage
    case 'hub_unreachable':
    case 'hub_unsupported':
      return EXIT.unreachable
    default:
      return EXIT.failure
  }
}
