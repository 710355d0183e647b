/** An error answer of the Hub (its JSON envelope), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, any> = {},
  ) {
    super(message)
  }
}

/**
 * Calls the Hub's API with the session cookie. JSON in and out; an error answer throws ApiError
 * with the envelope's code, message and details.
 */
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: {accept: 'application/json', ...(body !== undefined && {'content-type': 'application/json'})},
      ...(body !== undefined && {body: JSON.stringify(body)}),
    })
  } catch (err) {
    throw new ApiError(0, 'network_error', `the Hub did not answer (${(err as Error).message})`)
  }
  const text = await res.text()
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  if (!res.ok) {
    const e = json?.error
    throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `${res.status} ${res.statusText}`, e?.details ?? {})
  }
  return json as T
}

/** A WebSocket URL on this Hub for an API path. */
export const wsUrl = (path: string) => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`
