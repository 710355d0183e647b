/**
 * A workspace operation (create, diff, merge, push) that git or the repositories' state refuses.
 * It is an answer, not a failure: the broker sends it back with its code and the Hub turns it
 * into the error of that code (codes in src/api/error-codes.ts). A refusal is always raised
 * before anything was written, or after what was written has been removed again.
 */
export class WorkspaceRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
    this.name = 'WorkspaceRefusal'
  }
}

export interface Identity {
  name: string
  email: string
}

/** Environment that makes git record `author` and `committer` on the commits it writes. */
export function identityEnv(author: Identity, committer: Identity): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  }
}
