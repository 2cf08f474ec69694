// The error catalogue: every script code maps to its class, and every stable code is documented.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  DevicesBusyError,
  LockErrorCode,
  LockLostError,
  ScriptCode,
  WaiterExistsError,
  WaiterNotFoundError,
  errorFromScript,
} from '../errors.js';

const ctx = { waiterId: 'w-1', devices: ['d0', 'd1'], job: 'job-1', stage: 'train' };

describe('device lock: errors', () => {
  it('maps every script code to an error carrying the ids', () => {
    const exists = errorFromScript(ScriptCode.WaiterExists, '', ctx);
    assert.ok(exists instanceof WaiterExistsError && exists.waiterId === 'w-1');
    const busy = errorFromScript(ScriptCode.DevicesBusy, '', ctx);
    assert.ok(busy instanceof DevicesBusyError && busy.devices.join() === 'd0,d1');
    const lost = errorFromScript(ScriptCode.LockLost, '[{"d":"d1","r":"lapsed"}]', ctx);
    assert.ok(lost instanceof LockLostError);
    assert.deepEqual(lost.lost, [{ device: 'd1', reason: 'lapsed' }]);
    assert.equal(lost.code, LockErrorCode.LockLost);
    assert.equal(lost.name, 'LockLostError');
    assert.ok(errorFromScript(ScriptCode.WaiterNotFound, '', ctx) instanceof WaiterNotFoundError);
    assert.throws(() => errorFromScript(-99, '', ctx), /unknown code -99/);
  });

  it('documents every stable code in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const code of Object.values(LockErrorCode))
      assert.ok(readme.includes(`\`${code}\``), `${code} documented`);
  });
});
