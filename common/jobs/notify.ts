/** Redis notifications that follow committed changes: job events (wake SSE) and node assignments. */
import type { Redis } from 'ioredis';
import type { RedisNames } from '../queues.js';

export interface JobEventNotice {
  jobId: string;
  eventId: string;
}

export async function notifyEvents(
  redis: Redis,
  names: RedisNames,
  jobId: string,
  eventIds: string[],
): Promise<void> {
  if (!eventIds.length) return;
  const pipe = redis.pipeline();
  for (const eventId of eventIds) pipe.publish(names.eventsChannel, JSON.stringify({ jobId, eventId }));
  await pipe.exec();
}

/** Tells a node's daemon that its assignments changed; it re-reads them from the API. */
export async function notifyNode(redis: Redis, names: RedisNames, nodeId: string): Promise<void> {
  await redis.publish(names.nodeChannel(nodeId), JSON.stringify({ nodeId }));
}

export interface ControlMessage {
  jobId: string;
  action: 'cancel' | 'preempt';
}

export async function sendControl(redis: Redis, names: RedisNames, msg: ControlMessage): Promise<void> {
  await redis.publish(names.controlChannel, JSON.stringify(msg));
}
