/**
 * What a job tells its daemon it holds on each device becomes the free memory of the node's next
 * heartbeat, which the API takes only as a whole byte count. A stage on 3 devices of `tiny` (an
 * arena of 6,471,680 bytes, not a multiple of 3) once reported a fractional share: every heartbeat
 * was refused (400) while training held its devices, and the scheduler marked the node lost
 * (test/e2e/planner-replan.test.ts, training on 6 or 7 of 8 devices). Real engines, the real
 * Redis lock.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobSpecSchema } from '../../common/job-spec.js';
import { heartbeatSchema, stageDeviceMap } from '../../common/node-protocol/index.js';
import { fileRedis } from '../../test/helpers/redis.js';
import { stageLoopHarness } from '../stage-loop-harness.js';

const { lock } = fileRedis(after);
const MEMORY = 256 * 2 ** 20;

test('a stage on 3 devices reports whole bytes per device, and the heartbeat made from them is accepted', async () => {
  const spec = jobSpecSchema.parse({
    name: 'occupancy',
    resources: { devices: 4 },
    workflow: {
      mode: 'spatial',
      model: { preset: 'tiny' },
      task: { name: 'addition', digits: 1 },
      steps: 1,
      promptsPerStep: 8,
      groupSize: 4,
      checkpointEvery: 1_000_000,
      evalEvery: 1_000_000,
      warmup: { maxSteps: 0 },
    },
  });
  const devices = [0, 1, 2, 3];
  const map = stageDeviceMap('spatial', devices, { generate: 1, train: 3 });
  assert.equal(map.stages.train.length, 3);
  const held: { devices: string[]; bytes: number }[] = [];
  const h = await stageLoopHarness({
    spec,
    devices,
    map,
    memoryBytes: MEMORY,
    model: { preset: 'tiny' },
    task: { name: 'addition', digits: 1 },
    ...lock,
    balancer: 'off',
    report: () => undefined,
    occupancy: (d, bytes) => void held.push({ devices: d, bytes }),
  });
  try {
    assert.equal((await h.loop.run()).outcome, 'succeeded');
  } finally {
    await h.close();
  }
  const training = held.filter((o) => o.devices.length === 3 && o.bytes > 0);
  assert.ok(training.length > 0, 'training reported what it holds on its 3 devices');
  for (const o of held) {
    assert.ok(Number.isInteger(o.bytes), `whole bytes per device: ${o.bytes}`);
    // As the daemon builds its heartbeat (worker-node/main.ts), and as the API parses it.
    const beat = {
      devices: o.devices.map((d) => ({
        index: Number(d.split('/').at(-1)),
        freeMemoryBytes: Math.max(0, MEMORY - o.bytes),
      })),
    };
    const parsed = heartbeatSchema.safeParse(beat);
    assert.ok(parsed.success, `heartbeat refused: ${parsed.error?.message}`);
  }
});
