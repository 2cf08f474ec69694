/**
 * Names every process agrees on in Redis. All keys live under one prefix so that several systems
 * (or test runs) can share a Redis: BullMQ gets it as its `prefix`, everything else prepends it.
 */
export interface RedisNames {
  prefix: string;
  /** Pub/sub channel carrying `{ jobId, eventId }` whenever a job event row is committed. */
  eventsChannel: string;
  /** Pub/sub channel carrying `{ jobId, action }` for workers: cancel / preempt. */
  controlChannel: string;
  /** Pub/sub channel that wakes the scheduler's leader for a round (submission, requeue, node change). */
  schedulerChannel: string;
  /** Hash of every queued job's position, ETA and wait reason, rewritten by each round. */
  queueViewKey: string;
  /** Hash of each tenant's share and entitlement per pool, rewritten by each round. */
  sharesKey: string;
  /** Hash of each pool's capacity signal (devices wanted, idle), rewritten by each round. */
  capacityKey: string;
  /** Pub/sub channel a node's daemon listens on for "your assignments changed". */
  nodeChannel(nodeId: string): string;
  /** Prefix of the device-lock keys (common/device-lock). */
  lockPrefix: string;
}

export function redisNames(prefix: string): RedisNames {
  const p = prefix.endsWith(':') ? prefix : `${prefix}:`;
  return {
    prefix: p,
    eventsChannel: `${p}events`,
    controlChannel: `${p}control`,
    schedulerChannel: `${p}scheduler`,
    queueViewKey: `${p}queue-view`,
    sharesKey: `${p}shares`,
    capacityKey: `${p}capacity`,
    nodeChannel: (nodeId: string) => `${p}node:${nodeId}`,
    lockPrefix: p,
  };
}

/** Device ids in the lock service: `<nodeId>/<index>`, so a node's timeline is a prefix query. */
export const deviceLockId = (nodeId: string, index: number) => `${nodeId}/${index}`;
