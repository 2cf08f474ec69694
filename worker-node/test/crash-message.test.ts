/**
 * A job process that died without saying how its run ended is reported with how it exited and the
 * end of its stderr; one killed before it wrote anything failed with
 * `job process exited with SIGKILL: ` (a colon introducing nothing).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crashMessage } from '../crash-message.js';

test('a process killed without a word is reported without a dangling colon', () => {
  assert.equal(crashMessage(null, 'SIGKILL', ''), 'job process exited with SIGKILL');
  assert.equal(crashMessage(null, 'SIGKILL', ' \n\n  \n'), 'job process exited with SIGKILL');
  assert.equal(crashMessage(1, null, ''), 'job process exited with code 1');
});

test("the detail is the end of the process's stderr, blank lines left out", () => {
  assert.equal(
    crashMessage(2, null, 'Error: engine refused the spec\n    at build (engine.ts:1)\n'),
    'job process exited with code 2: Error: engine refused the spec | at build (engine.ts:1)',
  );
  const long = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join('\n\n');
  assert.equal(
    crashMessage(null, 'SIGABRT', long),
    'job process exited with SIGABRT: line 4 | line 5 | line 6 | line 7 | line 8',
  );
});
