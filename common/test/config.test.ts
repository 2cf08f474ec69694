/** The shared configuration parser: what each kind of value accepts, and how a refusal reads. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ConfigError, parseConfig } from '../config.js';
import { MAX_TIMER_MS, millis, nonBlank, numberIn, offOr, oneOf, port, urlOf } from '../config-values.js';

const parse = (s: z.ZodType, v: unknown) => (parseConfig(z.object({ X: s }), { X: v }) as { X: unknown }).X;
const refusal = (s: z.ZodType, v: unknown) => {
  try {
    parse(s, v);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail(`${JSON.stringify(v)} was accepted`);
};

test('a number is decimal, finite and in its range; anything else is refused with the range', () => {
  const ms = millis(50, 60_000);
  assert.equal(parse(ms, '1000'), 1000);
  assert.equal(parse(ms, '1e3'), 1000);
  assert.equal(parse(ms, ' 250 '), 250);
  // z.coerce.number() took '' and ' ' for 0 and '0x10' for 16; 1e99 passed where no max was set.
  for (const bad of ['abc', '', ' ', '-5', '0', '1e99', '0x10', 'Infinity', 'NaN', '2.5', '10ms']) {
    assert.equal(
      refusal(ms, bad),
      `invalid configuration:\n  X: must be an integer from 50 to 60000; got ${JSON.stringify(bad)}`,
    );
  }
  const fraction = numberIn({ min: 0, max: 1, fraction: true });
  assert.equal(parse(fraction, '0.25'), 0.25);
  assert.equal(parse(fraction, '.5'), 0.5);
  assert.match(refusal(fraction, '1.5'), /X: must be a number from 0 to 1; got "1.5"/);
});

test("durations stop at what Node's timers can wait", () => {
  assert.equal(parse(millis(1), String(MAX_TIMER_MS)), MAX_TIMER_MS);
  assert.match(refusal(millis(1), String(MAX_TIMER_MS + 1)), /from 1 to 2147483647/);
  assert.equal(parse(port(), '0'), 0);
  assert.match(refusal(port(), '65536'), /X: must be an integer from 0 to 65535/);
});

test('off or a number; words from a list; URLs of a scheme; text that is not blank', () => {
  const after = offOr({ min: 0, max: 100 });
  assert.equal(parse(after, 'off'), 'off');
  assert.equal(parse(after, '30'), 30);
  assert.match(refusal(after, 'never'), /X: must be off or an integer from 0 to 100; got "never"/);

  assert.equal(parse(oneOf(['on', 'off']), 'on'), 'on');
  assert.match(refusal(oneOf(['on', 'off']), 'true'), /X: must be one of on, off; got "true"/);
  assert.match(refusal(oneOf(['on', 'off']), ''), /got ""/);

  const redis = urlOf('redis:', 'rediss:');
  assert.equal(parse(redis, 'rediss://cache:6380/2'), 'rediss://cache:6380/2');
  for (const bad of ['', 'cache:6379', 'http://cache:6379']) {
    const message = refusal(redis, bad);
    assert.match(message, /X: must be a URL starting with redis:\/\/ or rediss:\/\//);
  }
  // A URL may carry a password: the refusal does not repeat it.
  assert.doesNotMatch(refusal(redis, 'http://user:secret@cache'), /secret/);

  assert.match(refusal(nonBlank(), '  '), /X: must not be empty/);
});

test('every problem is named in one error, under the name its user typed', () => {
  const schema = z.object({ A: millis(10), B: oneOf(['x']), flag: numberIn({ min: 1, max: 2 }) });
  assert.throws(
    () => parseConfig(schema, { A: 'abc', B: 'y', flag: '3' }, { flag: '--flag' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.problems, [
        'A: must be an integer from 10 to 2147483647; got "abc"',
        'B: must be one of x; got "y"',
        '--flag: must be an integer from 1 to 2; got "3"',
      ]);
      return true;
    },
  );
  const ok = parseConfig(schema, { A: '10', B: 'x', flag: '1' });
  assert.ok(Object.isFrozen(ok));
});
