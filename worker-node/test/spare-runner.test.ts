import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { SpareRunner } from '../spare-runner.js';

/** Stands in for a forked job process: alive until killed. */
function fakeChild(id: number) {
  const c = Object.assign(new EventEmitter(), {
    id,
    exitCode: null as number | null,
    signalCode: null as string | null,
    connected: true,
    kill(signal: string) {
      c.signalCode = signal;
      c.connected = false;
      c.emit('exit', null, signal);
      return true;
    },
  });
  return c;
}

function forks() {
  const made: ReturnType<typeof fakeChild>[] = [];
  const fork = () => {
    const c = fakeChild(made.length);
    made.push(c);
    return c as unknown as ChildProcess;
  };
  return { made, fork };
}

test('a job takes the waiting spare; the next is forked only when asked', () => {
  const { made, fork } = forks();
  const spare = new SpareRunner(fork, true);
  spare.fill();
  spare.fill();
  assert.equal(made.length, 1, 'one spare at a time');
  assert.equal(spare.take(), made[0] as unknown as ChildProcess);
  assert.equal(made.length, 1, 'no fork on the job start path');
  assert.equal(spare.take(), made[1] as unknown as ChildProcess, 'no spare waiting: a fresh fork');
  spare.fill();
  assert.equal(made.length, 3);
  spare.close();
  assert.equal(made[2]!.signalCode, 'SIGKILL', 'the waiting spare is stopped with the daemon');
  spare.fill();
  assert.equal(made.length, 3, 'none after close');
});

test('a spare that died while waiting is replaced, and off means a fork per job', () => {
  const { made, fork } = forks();
  const spare = new SpareRunner(fork, true);
  spare.fill();
  made[0]!.kill('SIGTERM');
  const c = spare.take();
  assert.equal(c, made[1] as unknown as ChildProcess);

  const off = forks();
  const none = new SpareRunner(off.fork, false);
  none.fill();
  assert.equal(off.made.length, 0);
  none.take();
  none.take();
  assert.equal(off.made.length, 2);
});
