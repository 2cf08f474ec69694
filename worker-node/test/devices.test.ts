import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNvidiaSmi, virtualDevices } from '../devices.js';

test('nvidia-smi CSV becomes device reports in bytes', () => {
  assert.deepEqual(parseNvidiaSmi('0, 81559, 80000\n1, 81559, 1024\n'), [
    { index: 0, kind: 'cuda', memoryBytes: 81559 * 2 ** 20, freeMemoryBytes: 80000 * 2 ** 20, threads: 1 },
    { index: 1, kind: 'cuda', memoryBytes: 81559 * 2 ** 20, freeMemoryBytes: 1024 * 2 ** 20, threads: 1 },
  ]);
  assert.throws(() => parseNvidiaSmi('0, N/A, 3'), /unexpected nvidia-smi line/);
});

test('virtual devices carry their budgets', () => {
  assert.deepEqual(virtualDevices(2, 1000, 3), [
    { index: 0, kind: 'cpu-virtual', memoryBytes: 1000, freeMemoryBytes: 1000, threads: 3 },
    { index: 1, kind: 'cpu-virtual', memoryBytes: 1000, freeMemoryBytes: 1000, threads: 3 },
  ]);
});
