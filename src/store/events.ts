import {EventEmitter} from 'node:events'
import type {Driver} from './create-db.js'

/**
 * A small cross-replica notification port. PostgreSQL uses LISTEN/NOTIFY on one dedicated
 * client (notifications are database-wide, so each carries the schema and replicas of other
 * schemas ignore it); SQLite has a single node, so an in-process emitter per database file
 * serves Hubs sharing the file inside one process (tests). Delivery is best effort: callers
 * keep a poll as a backstop.
 */
export interface StoreEvents {
  publish(channel: string, payload: Record<string, unknown>): Promise<void>
  /** Calls `fn` for each notification on `channel` (own ones included); returns an unsubscribe. */
  subscribe(channel: string, fn: (payload: Record<string, unknown>) => void): () => void
  /**
   * Calls `fn` whenever notifications may have been missed: when the listening connection drops,
   * once it listens anew, and once a newly subscribed channel is listened to (PostgreSQL); never
   * on SQLite, whose in-process delivery has no gap. A cache kept current by notifications drops what it holds. Returns an unsubscribe.
   */
  onGap(fn: () => void): () => void
  close(): Promise<void>
}

const local = new Map<string, EventEmitter>()

function inProcessEvents(key: string): StoreEvents {
  let bus = local.get(key)
  if (!bus) {
    bus = new EventEmitter()
    bus.setMaxListeners(0)
    local.set(key, bus)
  }
  const emitter = bus
  const mine: Array<[string, (p: Record<string, unknown>) => void]> = []
  return {
    publish: async (channel, payload) => {
      queueMicrotask(() => emitter.emit(channel, payload))
    },
    subscribe: (channel, fn) => {
      emitter.on(channel, fn)
      mine.push([channel, fn])
      return () => emitter.off(channel, fn)
    },
    onGap: () => () => {},
    close: async () => {
      for (const [c, fn] of mine) emitter.off(c, fn)
    },
  }
}

const PG_CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/

async function pgEvents(url: string, notify: (channel: string, text: string) => Promise<void>): Promise<StoreEvents> {
  const pg = await import('pg')
  const Client = pg.default?.Client ?? (pg as unknown as {Client: typeof import('pg').Client}).Client
  const emitter = new EventEmitter()
  emitter.setMaxListeners(0)
  let client: InstanceType<typeof Client> | null = null
  let schema = ''
  let closed = false
  const listening = new Set<string>()
  let connecting: Promise<void> | null = null
  const gapListeners = new Set<() => void>()
  const gap = () => {
    for (const fn of gapListeners) fn()
  }
  let everConnected = false
  let listens: Promise<unknown> = Promise.resolve()

  const connect = async () => {
    const c = new Client({connectionString: url})
    const lost = () => {
      // The connection dropped: listen again after a pause; callers' polls cover the gap, and
      // caches kept by notifications hear of it now and again once listening resumes.
      if (client !== c) return
      client = null
      gap()
      reconnect()
    }
    c.on('error', lost)
    c.on('end', lost)
    c.on('notification', (msg) => {
      if (!msg.payload) return
      try {
        const parsed = JSON.parse(msg.payload) as {schema?: string; payload?: Record<string, unknown>}
        if (parsed.schema === schema && parsed.payload) emitter.emit(msg.channel, parsed.payload)
      } catch {
        // not ours
      }
    })
    await c.connect()
    const {rows} = await c.query<{schema: string}>('select current_schema() as schema')
    schema = rows[0].schema
    for (const ch of listening) await c.query(`listen ${ch}`)
    client = c
    // What was published while no connection listened is lost: say so once listening again.
    if (everConnected) gap()
    everConnected = true
  }
  const reconnect = (): void => {
    if (!closed) setTimeout(() => void ensure().catch(reconnect), 1000).unref()
  }
  const ensure = async () => {
    if (closed || client) return
    connecting ??= connect().finally(() => (connecting = null))
    await connecting
  }
  await ensure()
  return {
    publish: async (channel, payload) => {
      if (!PG_CHANNEL.test(channel)) throw new Error(`bad channel ${channel}`)
      await ensure()
      await notify(channel, JSON.stringify({schema, payload}))
    },
    subscribe: (channel, fn) => {
      if (!PG_CHANNEL.test(channel)) throw new Error(`bad channel ${channel}`)
      emitter.on(channel, fn)
      if (!listening.has(channel)) {
        listening.add(channel)
        // One LISTEN at a time on the client (pg deprecates a query sent while one runs).
        // Until this LISTEN runs, what is published on the channel is not heard: a cache kept by
        // it may already hold what such a notification would have dropped.
        listens = listens
          .then(ensure)
          .then(() => client?.query(`listen ${channel}`))
          .then(gap)
          .catch(() => {})
      }
      return () => emitter.off(channel, fn)
    },
    onGap: (fn) => {
      gapListeners.add(fn)
      return () => gapListeners.delete(fn)
    },
    close: async () => {
      closed = true
      gapListeners.clear()
      emitter.removeAllListeners()
      const c = client
      client = null
      await c?.end().catch(() => {})
    },
  }
}

export async function createStoreEvents(driver: Driver, url: string, notify: (channel: string, text: string) => Promise<void>): Promise<StoreEvents> {
  return driver === 'postgres' ? pgEvents(url, notify) : inProcessEvents(url)
}
