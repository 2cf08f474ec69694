// The test-only workload shift (long-completions.ts): parsed from the worker's environment, applied
// after the given step (counted from where the job resumed), to the named job only when named.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Engine } from '../../native/index.js';
import type { RunnerStart } from '../messages.js';
import { lengthenCompletions, parseLongCompletions } from '../long-completions.js';

it('parses <step>:<tokens>[:<job>] and lengthens completions after that step only', async () => {
  assert.equal(parseLongCompletions(undefined), null);
  assert.equal(parseLongCompletions('8'), null);
  assert.deepEqual(parseLongCompletions('8:24'), { afterStep: 8, tokens: 24, job: null });
  assert.deepEqual(parseLongCompletions('8:24:growing'), { afterStep: 8, tokens: 24, job: 'growing' });

  const seen: unknown[] = [];
  const engine = { generate: async (o: unknown) => void seen.push(o) } as unknown as Engine;
  const start = {
    spec: { name: 'growing', workflow: { microBatches: 2 } },
    placement: { microBatches: 2 },
    resume: { step: 3, fromOwnRun: true },
  } as unknown as RunnerStart;
  lengthenCompletions(engine, start, 'generate', { TIMESHARE_TEST_LONG_COMPLETIONS: '4:24:growing' });
  for (let i = 0; i < 4; i++) await engine.generate({ numPrompts: 1 });
  // Step 4 (two micro-batches) as it was; step 5 long.
  assert.deepEqual(seen, [
    { numPrompts: 1 },
    { numPrompts: 1 },
    { numPrompts: 1, maxNewTokens: 24, stopToken: 65535 },
    { numPrompts: 1, maxNewTokens: 24, stopToken: 65535 },
  ]);
  const other = { generate: async (o: unknown) => o } as unknown as Engine;
  const before = other.generate;
  lengthenCompletions(other, { ...start, spec: { ...start.spec, name: 'x' } } as RunnerStart, 'generate', {
    TIMESHARE_TEST_LONG_COMPLETIONS: '0:24:growing',
  });
  assert.equal(other.generate, before, 'another job is untouched');
});
