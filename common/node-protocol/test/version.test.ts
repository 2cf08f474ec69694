import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NODE_PROTOCOL_VERSION,
  OLDEST_NODE_PROTOCOL_VERSION,
  nodeMessageUpgrades,
  upgradeNodeMessage,
  type NodeMessageUpgrade,
} from '../index.js';

test('every version the control plane accepts can be raised to its own', () => {
  // A bump of NODE_PROTOCOL_VERSION without its upgrade step fails here, not at a daemon's report.
  for (let v = OLDEST_NODE_PROTOCOL_VERSION; v <= NODE_PROTOCOL_VERSION; v++)
    assert.doesNotThrow(() => upgradeNodeMessage('finish', v, {}), `from version ${v}`);
  assert.deepEqual(
    nodeMessageUpgrades.map((u) => u.to),
    Array.from(
      { length: NODE_PROTOCOL_VERSION - OLDEST_NODE_PROTOCOL_VERSION },
      (_, i) => OLDEST_NODE_PROTOCOL_VERSION + 1 + i,
    ),
    'one step per version, in order',
  );
});

test('a message is raised one version at a time; other kinds and current messages are left as they are', () => {
  // Two made-up steps: version 2 adds a field to `finish`, version 3 renames one of `report`'s.
  const steps: NodeMessageUpgrade[] = [
    { to: 2, messages: { finish: (b) => ({ ...(b as object), exitCode: null }) } },
    {
      to: 3,
      messages: {
        report: (b) => {
          const { seconds, ...rest } = b as { seconds: number };
          return { ...rest, deviceSeconds: seconds };
        },
        finish: (b) => ({ ...(b as object), v3: true }),
      },
    },
  ];
  const finish = { queueSeq: 1, outcome: 'crashed', error: 'x' };
  assert.deepEqual(upgradeNodeMessage('finish', 1, finish, 3, steps), {
    ...finish,
    exitCode: null,
    v3: true,
  });
  assert.deepEqual(upgradeNodeMessage('finish', 2, finish, 3, steps), { ...finish, v3: true });
  assert.equal(upgradeNodeMessage('finish', 3, finish, 3, steps), finish);
  assert.deepEqual(upgradeNodeMessage('report', 1, { seconds: 4 }, 3, steps), { deviceSeconds: 4 });
  const beat = { devices: [] };
  assert.equal(upgradeNodeMessage('heartbeat', 1, beat, 3, steps), beat);
  assert.throws(() => upgradeNodeMessage('finish', 1, finish, 4, steps), /no upgrade to version 4/);
});
