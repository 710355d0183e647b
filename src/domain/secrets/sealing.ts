import {createCipheriv, createDecipheriv, randomBytes} from 'node:crypto'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'

/**
 * Encryption at rest of the Hub's secrets (project and user secrets, broker signing secrets):
 * AES-256-GCM under the Hub's secrets key, with associated data naming the row a value belongs
 * to, so a sealed value copied into another row does not open.
 */

/**
 * The Hub's secrets key: `SVC_SECRETS_KEY` (64 hex characters) when set — replicas of a hosted
 * Hub must share it — else `~/.svc/secrets.key`, created (mode 0600) on first use.
 */
export function loadSecretsKey(env: NodeJS.ProcessEnv, file: string): Buffer {
  if (env.SVC_SECRETS_KEY) {
    if (!/^[0-9a-fA-F]{64}$/.test(env.SVC_SECRETS_KEY)) throw new Error('SVC_SECRETS_KEY: expected 64 hex characters (32 bytes)')
    return Buffer.from(env.SVC_SECRETS_KEY, 'hex')
  }
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex')
  } catch {
    mkdirSync(dirname(file), {recursive: true})
    const key = randomBytes(32)
    try {
      writeFileSync(file, key.toString('hex') + '\n', {mode: 0o600, flag: 'wx'})
      return key
    } catch {
      return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex')
    }
  }
}

/** `iv.tag.ciphertext`, each base64url: 12-byte IV, 16-byte tag. */
export function seal(key: Buffer, aad: string, value: string): string {
  const iv = randomBytes(12)
  const c = createCipheriv('aes-256-gcm', key, iv)
  c.setAAD(Buffer.from(aad))
  const body = Buffer.concat([c.update(value, 'utf8'), c.final()])
  return [iv, c.getAuthTag(), body].map((b) => b.toString('base64url')).join('.')
}

/** The value `seal` sealed with this key and `aad`; throws when either differs or the text was altered. */
export function openSealed(key: Buffer, aad: string, sealed: string): string {
  const [iv, tag, body] = sealed.split('.').map((s) => Buffer.from(s, 'base64url'))
  const d = createDecipheriv('aes-256-gcm', key, iv)
  d.setAAD(Buffer.from(aad))
  d.setAuthTag(tag)
  return Buffer.concat([d.update(body), d.final()]).toString('utf8')
}

const SEALED_RE = /^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/

/**
 * Whether `text` has the shape `seal` writes. Tells a value stored before encryption at rest
 * (broker secrets are `svc_brk_<hex>`, which has no dot) from a sealed one.
 */
export function isSealed(text: string): boolean {
  return SEALED_RE.test(text)
}
