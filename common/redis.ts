import { Redis } from 'ioredis';

export { Redis };

/** A Redis connection. BullMQ needs `maxRetriesPerRequest: null` on the connections it blocks on. */
export function connectRedis(
  url: string,
  opts: { blocking?: boolean; autoPipelining?: boolean } = {},
): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    // Commands issued in the same tick share one write: under concurrent submissions this turns
    // many small socket writes into a few (never on connections that block).
    enableAutoPipelining: opts.autoPipelining === true && !opts.blocking,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}
