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

/**
 * A request to one run of a job: `queueSeq` is the run's (the job's queue_seq when the request was
 * decided). A message can arrive late (a publisher paused after its commit, a slow API process) and
 * by then the job may run again, even on the same node: the worker acts on it only for that run.
 */
export interface ControlMessage {
  jobId: string;
  queueSeq: number;
  action: 'cancel' | 'preempt';
}

export async function sendControl(redis: Redis, names: RedisNames, msg: ControlMessage): Promise<void> {
  await redis.publish(names.controlChannel, JSON.stringify(msg));
}
