/**
 * A worker node for API tests that run no scheduler and no worker: its key, token and registration,
 * and a job placed on it as the scheduler's leader would place it (the placement is a fenced write:
 * the test holds the leader lease at epoch 1).
 */
import type request from 'supertest';
import type { Harness } from './api-harness.js';

export interface TestNode {
  id: string;
  /** The node key, for a client that exchanges it itself (worker-node/control-plane-client.ts). */
  apiKey: string;
  /** Sends a request with the node's token. */
  as: (r: request.Test) => request.Test;
}

export const oneDevice = [{ index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9 }];

export async function registerTestNode(h: Harness, name: string, devices = oneDevice): Promise<TestNode> {
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
  const apiKey = key.body.apiKey as string;
  const token = (await h.http.post('/v1/auth/token').send({ apiKey }).expect(200)).body.token as string;
  const as = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);
  const id = (await as(h.http.post('/v1/nodes/register')).send({ name, devices }).expect(200)).body
    .id as string;
  return { id, apiKey, as };
}

/**
 * Places queued job `jobId` on device 0 of node `nodeId` (temporal), an hour ago; returns the run's
 * `queueSeq`, which the node's reports name.
 */
export async function placeOnNode(h: Harness, nodeId: string, jobId: string): Promise<number> {
  const { pool } = h.api.deps.db;
  await pool.query(
    `INSERT INTO scheduler_leases (name, holder, epoch, expires_at)
     VALUES ('scheduler', 'api-test', 1, now() + interval '1 hour') ON CONFLICT (name) DO NOTHING`,
  );
  const placement = {
    nodeId,
    devices: [0],
    mode: 'temporal',
    stages: { generate: [0], train: [0] },
    threadsPerDevice: 1,
    memoryBytes: 0,
  };
  const r = await pool.query(
    `UPDATE jobs SET status = 'placed', node_id = $2, sched_epoch = 1, placed_at = now() - interval '1 hour', placement_device_seconds = 0,
       placement = $3::jsonb WHERE id = $1 AND status = 'queued' RETURNING queue_seq`,
    [jobId, nodeId, JSON.stringify(placement)],
  );
  if (!r.rows[0]) throw new Error(`job ${jobId} is not queued`);
  return r.rows[0].queue_seq as number;
}
