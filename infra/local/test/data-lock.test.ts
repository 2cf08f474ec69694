/** One `npm start` per data folder: a live launcher's lock refuses a second, a dead one's is taken over. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimDataDir, DataDirInUse, LOCK_FILE } from '../data-lock.js';

function withDir(fn: (dir: string) => void): void {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'data-lock-'));
  try {
    fn(path.join(parent, '.data'));
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

/** The id of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

test('a second launcher is refused while the first lives, naming it; the folder is free once released', () =>
  withDir((dir) => {
    const release = claimDataDir(dir);
    assert.equal(readFileSync(path.join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    // The test runner's parent stands in for another live launcher.
    assert.throws(
      () => claimDataDir(dir, process.ppid),
      (err: unknown) =>
        err instanceof DataDirInUse && err.pid === process.pid && /TIMESHARE_DATA_DIR/.test(err.message),
    );
    release();
    assert.equal(existsSync(dir), false, 'an empty folder made for the lock goes with it');
    claimDataDir(dir, process.ppid)();
  }));

test("a dead launcher's lock is taken over; a folder holding data stays on release", () =>
  withDir((dir) => {
    const first = claimDataDir(dir, deadPid());
    writeFileSync(path.join(dir, 'outbox'), 'records');
    const release = claimDataDir(dir);
    assert.equal(readFileSync(path.join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    first(); // the dead one's release (were it to run) leaves the new holder's lock alone
    assert.ok(existsSync(path.join(dir, LOCK_FILE)));
    release();
    assert.equal(existsSync(path.join(dir, LOCK_FILE)), false);
    assert.ok(existsSync(path.join(dir, 'outbox')), 'data stays');
  }));

test('a lock file that is not a pid is stale', () =>
  withDir((dir) => {
    claimDataDir(dir)();
    claimDataDir(dir, deadPid());
    writeFileSync(path.join(dir, LOCK_FILE), 'garbage');
    claimDataDir(dir)();
  }));
