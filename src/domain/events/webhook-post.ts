import {createHmac} from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import type {LookupFunction} from 'node:net'

/** `sha256=<hex HMAC-SHA256 of the body>` with the channel's secret. */
export const signatureOf = (secret: string, body: string) => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')

/**
 * POSTs a JSON body; resolves with the status code, rejects on a network error or after
 * `timeoutMs`. The response body is read and dropped (at most 64 KiB kept for the error text).
 * `lookup` resolves the host (webhook-guard.ts checks and pins it). No pooled connection is
 * reused: a socket opened for a channel allowed private targets must not serve another.
 */
export function postJson(url: string, body: string, headers: Record<string, string>, timeoutMs = 10_000, lookup?: LookupFunction): Promise<{status: number; text: string}> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const mod = u.protocol === 'https:' ? https : http
    const req = mod.request(u, {method: 'POST', agent: false, ...(lookup && {lookup}), headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'svc-hub', ...headers}, timeout: timeoutMs}, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        if (text.length < 65536) text += c
      })
      res.on('end', () => resolve({status: res.statusCode ?? 0, text}))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}
