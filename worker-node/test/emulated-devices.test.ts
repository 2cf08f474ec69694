// The test-only device emulation (TIMESHARE_TEST_DEVICE_WORK): what it parses, and that it wraps
// only its role's call of only the jobs it names, passing the call through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Engine } from '../../native/index.js';
import { emulateDevices, parseDeviceWork } from '../emulated-devices.js';

test('parses <generate ms>:<train ms>[:<job name>], and nothing else', () => {
  assert.deepEqual(parseDeviceWork('480:60'), { generateMs: 480, trainMs: 60, job: null });
  assert.deepEqual(parseDeviceWork('0.5:2:rebalance'), { generateMs: 0.5, trainMs: 2, job: 'rebalance' });
  for (const bad of [undefined, '', '480', 'a:b', '-1:2'])
    assert.equal(parseDeviceWork(bad), null, String(bad));
});

test('wraps the generator’s generate and the learner’s train of the named job, passing calls through', async () => {
  const calls: string[] = [];
  const fake = () =>
    ({
      generate: async (o: unknown) => (calls.push(`generate ${JSON.stringify(o)}`), 'rollouts'),
      train: async (o: unknown) => (calls.push(`train ${JSON.stringify(o)}`), 'stats'),
    }) as unknown as Engine;
  const env = { TIMESHARE_TEST_DEVICE_WORK: '1:1:mine' };

  const untouched = fake();
  const { generate, train } = untouched;
  emulateDevices(untouched, 'generator', 2, 'other', env);
  emulateDevices(untouched, 'learner', 2, 'mine', {});
  assert.equal(untouched.generate, generate, 'another job: unchanged');
  assert.equal(untouched.train, train, 'unset: unchanged');

  const gen = emulateDevices(fake(), 'generator', 2, 'mine', env);
  const learner = emulateDevices(fake(), 'learner', 3, 'mine', env);
  assert.equal(await gen.generate({ numPrompts: 4 }), 'rollouts');
  assert.equal(await learner.train({ lr: 1 } as never), 'stats');
  assert.deepEqual(calls, ['generate {"numPrompts":4}', 'train {"lr":1}']);
});
