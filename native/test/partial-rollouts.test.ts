// Partial rollouts: generation stops with a tail of unfinished groups, which the next call replays
// (tokens, log-probs and weight versions as sampled) and finishes.
import assert from 'node:assert/strict';
import test from 'node:test';

import type { Rollouts } from '../index.js';
import { microEngine } from './helpers.js';

// An untrained model says <end> about once in its vocabulary's size: over two letters, lengths
// spread from 1 to the bound, and a batch has a straggler tail.
const MAX_NEW = 12;
const twoLetters = { task: { name: 'reversal' as const, alphabet: 2, minLength: 3, maxLength: 4 } };
const options = { numPrompts: 16, groupSize: 4, temperature: 1, maxNewTokens: MAX_NEW };

/** Whether sequence b ended: at the length bound, or with <end> as its last sampled token. */
function ended(r: Rollouts, b: number, end: number): boolean {
  if (r.lengths[b] === MAX_NEW) return true;
  let last = -1;
  for (let t = 0; t < r.length; t++) if (r.mask[b * r.length + t]) last = t;
  return last >= 0 && r.tokens[b * r.length + last] === end;
}

function versionsOf(r: Rollouts, b: number): Set<number> {
  const out = new Set<number>();
  for (let t = 0; t < r.length; t++) if (r.mask[b * r.length + t]) out.add(r.versions[b * r.length + t]!);
  return out;
}

test('partial rollouts return finished groups only, carry the rest, and replay them under newer weights', async () => {
  const e = microEngine(twoLetters);
  const end = (await e.info()).config.vocab - 2;
  const first = await e.generate({ ...options, partialTail: 0.25, maxCarries: 1 });
  assert.ok(
    first.carriedGroups >= 1 && first.carriedGroups <= 4,
    `carried ${first.carriedGroups} of 16 groups`,
  );
  assert.equal(first.batch, 4 * (16 - first.carriedGroups));
  for (let b = 0; b < first.batch; b++) assert.ok(ended(first, b, end), `sequence ${b} returned unfinished`);
  assert.ok(first.occupancy > 0 && first.occupancy < 1, `occupancy ${first.occupancy}`);

  // Training moves the weight version; the carried groups come back with tokens of both versions.
  await e.train({ rollouts: first, lr: 1e-3 });
  const second = await e.generate({ ...options, partialTail: 0.25, maxCarries: 1 });
  let mixed = 0;
  for (let b = 0; b < second.batch; b++) {
    assert.ok(ended(second, b, end), `sequence ${b} returned unfinished`);
    if (versionsOf(second, b).size === 2) mixed++;
  }
  assert.ok(mixed >= 1, 'no replayed sequence sampled on under the newer weights');
  // maxCarries 1: every carried group finished in this call, so it returned them beside the fresh ones.
  assert.equal(second.batch + 4 * second.carriedGroups, 4 * (16 + first.carriedGroups));
  // Replayed tokens are not counted as new.
  let masked = 0;
  for (let b = 0; b < second.batch; b++) masked += second.lengths[b]!;
  assert.ok(second.newTokens < masked + 4 * second.carriedGroups * MAX_NEW);
  await e.train({ rollouts: second, lr: 1e-3 });
  await e.close();
});

test('without partialTail nothing is carried and a batch runs to its last sequence', async () => {
  const e = microEngine(twoLetters);
  const r = await e.generate(options);
  assert.equal(r.batch, 64);
  assert.equal(r.carriedGroups, 0);
  assert.ok(r.occupancy > 0 && r.occupancy <= 1);
  await e.close();
});

test('an rlStep with partial rollouts trains on the finished groups', async () => {
  const e = microEngine(twoLetters);
  const step = await e.rlStep({ generate: { ...options, partialTail: 0.25 }, train: { lr: 1e-3 } });
  assert.equal(step.trainedSequences + 4 * step.carriedGroups, 64);
  assert.ok(step.carriedGroups >= 1);
  const next = await e.rlStep({ generate: { ...options, partialTail: 0.25 }, train: { lr: 1e-3 } });
  assert.equal(next.trainedSequences + 4 * next.carriedGroups, 64 + 4 * step.carriedGroups);
  // The first step trained on its own samples only; the second on replayed tokens one version old.
  assert.equal(step.staleness.offPolicy, 0);
  assert.ok(next.staleness.offPolicy > 0 && next.staleness.max === 1, JSON.stringify(next.staleness));
  await e.close();
});
