/**
 * A job process forked before it is needed: starting one costs a process, the module graph and the
 * native engine's code (~0.2 s compiled, ~0.5 s from source), which a job placed on an idle node
 * would otherwise wait for between its placement and its first step. The daemon keeps one spare
 * that is waiting for its `start` message (job-runner.ts) and forks the next one once the job that
 * took it has reported its first step (or ended), so the fork does not compete with that job's
 * start for the CPU.
 *
 * A spare holds no job, device or lock; it exits with the daemon (its IPC channel closes).
 */
import type { ChildProcess } from 'node:child_process';

export class SpareRunner {
  private spare: ChildProcess | null = null;
  private closed = false;

  constructor(
    private readonly fork: () => ChildProcess,
    private readonly enabled: boolean,
  ) {}

  /** Forks the spare now if there is none (once registered, and after each job's start). */
  fill(): void {
    if (!this.enabled || this.closed || this.usable(this.spare)) return;
    const child = this.fork();
    // A spare that dies while waiting (killed, out of memory) is simply replaced at the next take.
    child.once('exit', () => {
      if (this.spare === child) this.spare = null;
    });
    this.spare = child;
  }

  /** A job process ready for its `start` message: the spare if one is waiting, else a new fork. */
  take(): ChildProcess {
    const child = this.usable(this.spare) ? this.spare! : this.fork();
    this.spare = null;
    return child;
  }

  close(): void {
    this.closed = true;
    if (this.usable(this.spare)) this.spare!.kill('SIGKILL');
    this.spare = null;
  }

  private usable(c: ChildProcess | null): boolean {
    return c !== null && c.exitCode === null && c.signalCode === null && c.connected;
  }
}
