/**
 * The system's processes, started the way the tests start them (node --import tsx <entry>), each
 * appending to its own log in the run's log directory: a process the soak kills and restarts
 * keeps one log, with a line at each start and exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../test/helpers/processes.js';
import type { Clock } from './clock.js';

export interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  startedAt: number;
}

export const alive = (p: Proc | undefined): boolean =>
  !!p && p.child.exitCode === null && p.child.signalCode === null;

export class ProcessLauncher {
  /** Every pid ever started, so that the cleanup can make sure none outlives the run. */
  private readonly pids = new Set<number>();

  constructor(
    readonly logDir: string,
    private readonly clock: Clock,
  ) {}

  get everyPid(): ReadonlySet<number> {
    return this.pids;
  }

  start(name: string, entry: string, env: Record<string, string>, extraArgs: string[] = []): Proc {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, entry), ...extraArgs], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = createWriteStream(path.join(this.logDir, `${name}.log`), { flags: 'a' });
    out.write(`--- start pid ${child.pid} at ${this.clock.stamp()}s\n`);
    child.stdout!.pipe(out, { end: false });
    child.stderr!.pipe(out, { end: false });
    this.pids.add(child.pid!);
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (code, signal) => {
        out.write(`--- exit ${signal ?? code} at ${this.clock.stamp()}s\n`);
        resolve();
      }),
    );
    return { name, child, exited, startedAt: Date.now() };
  }
}
