import {createHash, randomBytes, randomUUID, timingSafeEqual} from 'node:crypto'

export const newId = () => randomUUID()

/** Credential prefixes: the kind of a bearer credential is read from the credential itself. */
export const TOKEN_PREFIX = {
  dev: 'svc_dev_',
  userAccessToken: 'svc_pat_',
  session: 'svc_ses_',
  agent: 'svc_agt_',
} as const

/** A new secret: prefix + 64 hex characters (32 random bytes). */
export const newSecret = (prefix: string) => prefix + randomBytes(32).toString('hex')

/** Secrets are stored only as SHA-256 hex digests. */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex')

/** Constant-time string comparison (compares digests, so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}

export const DEV_TOKEN_PATTERN = /^svc_dev_[0-9a-f]{64}$/
