import { Redis } from 'ioredis';

export { Redis };

/** What a connection logs about its outages; a Logger fits. */
export interface RedisLog {
  warn(obj: object, msg: string): void;
}

export interface ConnectRedisOptions {
  /** A connection BullMQ or a subscription blocks on: commands wait for Redis, never fail early. */
  blocking?: boolean;
  autoPipelining?: boolean;
  /** Told once an outage: when the connection fails, and when it is ready again. */
  log?: RedisLog;
  /** Which of the process's connections this is, in those lines. */
  name?: string;
}

/**
 * A Redis connection. BullMQ needs `maxRetriesPerRequest: null` on the connections it blocks on.
 *
 * Every connection gets an 'error' listener: without one ioredis prints "[ioredis] Unhandled error
 * event" and a stack for every failed reconnection attempt while Redis is away (several a second, in
 * every process). The commands that fail still reject where they were made; the listener only logs,
 * at warn once an outage (the first error after the connection was ready) and again when it is
 * ready, so an outage is two lines whatever its length.
 */
export function connectRedis(url: string, opts: ConnectRedisOptions = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    // Commands issued in the same tick share one write: under concurrent submissions this turns
    // many small socket writes into a few (never on connections that block).
    enableAutoPipelining: opts.autoPipelining === true && !opts.blocking,
    enableReadyCheck: true,
    lazyConnect: false,
  });
  const client = opts.name ?? (opts.blocking ? 'subscriber' : 'commands');
  let failing = false;
  redis.on('error', (err: Error & { code?: string }) => {
    if (failing) return;
    failing = true;
    opts.log?.warn(
      { err: { message: err.message, code: err.code }, client },
      'Redis connection failing; reconnecting (logged again when it is back)',
    );
  });
  redis.on('ready', () => {
    if (!failing) return;
    failing = false;
    opts.log?.warn({ client }, 'Redis connection ready again');
  });
  return redis;
}
