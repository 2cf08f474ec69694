/** Each test file gets its own Redis key prefix; `cleanup` deletes every key under it. */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const testRedisUrl = () =>
  process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function testPrefix(): string {
  return `ts-test-${randomBytes(5).toString('hex')}`;
}

export async function deleteKeys(prefix: string, url = testRedisUrl()): Promise<number> {
  const redis = new Redis(url);
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/**
 * A Redis connection and a key prefix of the test file's own: on the file's `after`, the
 * connection closes and every key under the prefix is deleted.
 */
export function fileRedis(after: (fn: () => Promise<void>) => void): {
  redis: Redis;
  prefix: string;
  /** The device-lock options a stage-loop harness takes, under this file's prefix. */
  lock: { redis: Redis; redisUrl: string; lockPrefix: string; leaseMs: number };
} {
  const prefix = testPrefix();
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
  after(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
  });
  return {
    redis,
    prefix,
    lock: { redis, redisUrl: testRedisUrl(), lockPrefix: `${prefix}:lock`, leaseMs: 60_000 },
  };
}
