// Test fixtures: a real Redis, a fresh random key prefix per test file, and cleanup of exactly
// that prefix, so no test depends on (or leaves) state from another run.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { DeviceLockService } from '../device-lock-service.js';
import type { DeviceLockOptions } from '../types.js';

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function randomPrefix(): string {
  return `ts-test-${randomBytes(6).toString('hex')}:`;
}

export function connect(): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: 1 });
}

export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

/** A lock domain for one test file: services share the prefix, each has its own connection. */
export class LockFixture {
  readonly prefix = randomPrefix();
  private readonly clients: Redis[] = [];
  private readonly services: DeviceLockService[] = [];
  private readonly clientOf = new Map<DeviceLockService, Redis>();

  service(options: Partial<DeviceLockOptions> = {}): DeviceLockService {
    const redis = connect();
    this.clients.push(redis);
    // A new prefix: nothing held a device before (DeviceLockService.declareFresh). Sent on the
    // service's own connection, so Redis has it before the service's first script.
    void redis.set(`${this.prefix}lock:grace`, '0', 'NX');
    const s = new DeviceLockService(redis, { prefix: this.prefix, ...options });
    this.services.push(s);
    this.clientOf.set(s, redis);
    return s;
  }

  /** Simulates the death of the process owning `s`: its connections drop, nothing is cleaned up. */
  kill(s: DeviceLockService): void {
    this.clientOf.get(s)?.disconnect();
    s.close();
  }

  private admin: Redis | undefined;

  /** A connection of the test's own (raw reads, cleanup), never one a test kills. */
  get redis(): Redis {
    this.admin ??= connect();
    return this.admin;
  }

  async close(): Promise<void> {
    for (const s of this.services) s.close();
    await deletePrefix(this.redis, this.prefix);
    // Clients a test disconnected on purpose (a dead process) are already closed.
    const open = [...this.clients, this.redis].filter((c) => c.status === 'ready');
    await Promise.all(open.map((c) => c.quit()));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once the waiter is queued (acquire's onQueued fired). */
export function queued(): { onQueued: (id: string) => void; promise: Promise<string> } {
  let resolve!: (id: string) => void;
  const promise = new Promise<string>((r) => (resolve = r));
  return { onQueued: (id) => resolve(id), promise };
}
