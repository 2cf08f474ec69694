import { Redis } from 'ioredis';

export { Redis };

/** A Redis connection. BullMQ needs `maxRetriesPerRequest: null` on the connections it blocks on. */
export function connectRedis(url: string, opts: { blocking?: boolean } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: opts.blocking ? null : 3,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}
