/** Runs the `timeshare` bin as a real child process, the way a user's shell would. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../helpers/processes.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { timeoutMs?: number; cwd?: string; closeStdout?: boolean } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'cli/bin.mjs'), ...args], {
    cwd: opts.cwd ?? repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  // A reader gone before the CLI writes (`| head` done reading): its writes meet a closed pipe.
  if (opts.closeStdout) child.stdout.destroy();
  else child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
