import assert from 'node:assert/strict';
import { test } from 'node:test';

import { microEngine } from './helpers.js';

test('training problems never come from the held-out set, which is fixed', async () => {
  const e = microEngine();
  const a = await e.evaluate({ samples: 500 });
  assert.equal(a.problems, 500);
  const held = new Set(a.samples.map((s) => s.prompt));
  assert.equal(held.size, 500);
  const other = microEngine({ seed: 1234 });
  const b = await other.evaluate({ samples: 500 });
  assert.deepEqual(
    b.samples.map((s) => s.prompt),
    a.samples.map((s) => s.prompt),
    'same held-out set regardless of seed',
  );
  const g = await e.generate({ numPrompts: 2000, groupSize: 1, decode: true, maxNewTokens: 1 });
  for (const t of g.texts) assert.ok(!held.has(t.slice(0, t.indexOf('=') + 1)), `${t} is held out`);
  await e.close();
  await other.close();
});

for (const name of ['addition', 'reversal', 'sorting'] as const) {
  test(`${name}: prompts, rewards and sampling outputs are consistent`, async () => {
    const e = microEngine({ task: { name, digits: 2 } });
    const r = await e.generate({ numPrompts: 32, groupSize: 2, decode: true });
    assert.equal(r.batch, 64);
    const { padToken } = await e.info();
    for (let b = 0; b < r.batch; b++) {
      const row = r.tokens.subarray(b * r.length, (b + 1) * r.length);
      for (let t = 0; t < r.pad[b]!; t++) assert.equal(row[t], padToken, 'left padding');
      assert.notEqual(row[r.pad[b]!], padToken, 'prompt starts after the padding');
      const reward = r.rewards[b]!;
      assert.ok(reward === 0 || reward === 1);
      for (let t = r.promptLength; t < r.length; t++) {
        const sampled = r.mask[b * r.length + t] === 1;
        assert.equal(sampled, t < r.promptLength + r.lengths[b]!);
        if (sampled) assert.ok(r.logprobs[b * r.length + t]! <= 0);
      }
    }
    const text = r.texts[0]!;
    if (name === 'addition') assert.match(text, /^\d+\+\d+=/);
    else assert.match(text, name === 'reversal' ? /^[a-j]{3,6}=/ : /^\d{3,6}=/);
    await e.close();
  });
}

test('GRPO on fresh samples is on-policy: recomputed log-probs equal the sampler`s exactly', async () => {
  const e = microEngine();
  const r = await e.generate({ numPrompts: 16, groupSize: 4 });
  // An untrained model scores 0 everywhere (zero advantages, no update); give the groups some spread.
  r.rewards.forEach((_, i) => (r.rewards[i] = i % 3 === 0 ? 1 : 0));
  const s = await e.train({ rollouts: r, algorithm: 'grpo' });
  assert.equal(s.ratioMean, 1);
  assert.equal(s.clipFraction, 0);
  assert.ok(s.tokens > 0 && s.profile.flops > 0 && s.profile.peakArenaBytes > 0);
  const ppo = await e.train({ rollouts: r, algorithm: 'ppo', epochs: 2 });
  assert.ok(ppo.ratioMean !== 1, 'the second PPO epoch sees the updated policy');
  const ris = await e.train({ rollouts: r, algorithm: 'reinforce_is', klCoef: 0.1 });
  assert.ok(ris.isWeightMean > 0 && ris.isWeightMean <= 5);
  assert.ok(ris.kl >= 0);
  await e.close();
});

test('supervised warm-up improves held-out accuracy on 1-digit addition', async () => {
  const e = microEngine({ task: { name: 'addition', digits: 1 } });
  const before = await e.evaluate();
  await e.warmup({ targetAccuracy: 0.5, maxSteps: 400 });
  const warm = await e.evaluate();
  assert.ok(warm.accuracy > before.accuracy, `${before.accuracy} -> ${warm.accuracy}`);
  await e.close();
});

test('a warm-up stops before its next step once its signal aborts, and an earlier stop does not carry over', async () => {
  const e = microEngine({ task: { name: 'addition', digits: 1 } });
  const aborted = new AbortController();
  aborted.abort();
  const none = await e.warmup({ maxSteps: 5, targetAccuracy: 1 }, aborted.signal);
  assert.equal(none.interrupted, true);
  assert.equal(none.steps, 0);
  const whole = await e.warmup({ maxSteps: 3, targetAccuracy: 1 });
  assert.equal(whole.interrupted, false);
  assert.equal(whole.steps, 3, 'the stop was for the warm-up before');

  const stop = new AbortController();
  const running = e.warmup({ maxSteps: 10_000_000, targetAccuracy: 1, probeEvery: 1_000_000 }, stop.signal);
  setTimeout(() => stop.abort(), 50);
  const cut = await running;
  assert.equal(cut.interrupted, true);
  assert.ok(cut.steps < 10_000_000, `${cut.steps} steps`);
  await e.close();
});
