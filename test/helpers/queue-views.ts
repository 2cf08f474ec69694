/**
 * One scheduling round's queue views (positions, estimated starts, wait reasons), published as the
 * leader publishes them, for API tests whose harness runs no scheduler process. Nothing is placed.
 */
import type { Policy } from '../../scheduler/core/types.js';
import { schedule } from '../../scheduler/core/schedule.js';
import { writeViews } from '../../scheduler/rounds/publish-round.js';
import { readSnapshot } from '../../scheduler/rounds/read-snapshot.js';
import type { Harness } from './api-harness.js';

export async function publishQueueViews(h: Harness, policy: Policy): Promise<void> {
  const read = await readSnapshot(h.api.deps.db.pool, 10_000);
  await writeViews(h.api.deps.redis, h.api.deps.names, schedule(read.snapshot, policy, read.now), read.now);
}
