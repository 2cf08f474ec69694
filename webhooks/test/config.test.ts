/** The dispatcher's configuration is the base schema plus its own: shared variables, checked once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadWebhookConfig } from '../config.js';

test('defaults, the shared variables of the base schema, and a bad value named at start', () => {
  const c = loadWebhookConfig({});
  assert.equal(c.LOG_LEVEL, 'info');
  assert.equal(c.DATABASE_URL, 'postgresql://postgres@127.0.0.1:5432/timeshare');
  assert.equal(c.TIMESHARE_WEBHOOK_ALLOW_PRIVATE, false);
  assert.equal(c.TIMESHARE_WEBHOOK_POLL_MS, 500);
  assert.equal(loadWebhookConfig({ TIMESHARE_FAULT: 'crash_in_round' }).TIMESHARE_FAULT, 'crash_in_round');
  // A misspelt fault would inject nothing and the test that set it would pass for the wrong reason.
  assert.throws(() => loadWebhookConfig({ TIMESHARE_FAULT: 'x' }), /TIMESHARE_FAULT: must be one of/);
  assert.throws(
    () => loadWebhookConfig({ LOG_LEVEL: 'loud', TIMESHARE_WEBHOOK_POLL_MS: '1' }),
    /LOG_LEVEL[\s\S]*TIMESHARE_WEBHOOK_POLL_MS/,
  );
  assert.ok(Object.isFrozen(c));
});
