/**
 * The error a daemon reports for a job process that exited without saying how its run ended: how
 * it exited and the end of what it wrote to stderr, which is the job's `error` once its attempts
 * run out. A process killed before it wrote anything (SIGKILL: the OOM killer, an operator) has no
 * stderr, and the message ended in a dangling colon: `job process exited with SIGKILL: `.
 */

/** Lines of stderr kept: the end of a stack trace or of the engine's last words. */
const TAIL_LINES = 5;

export function crashMessage(code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const how = `job process exited with ${signal ?? `code ${code}`}`;
  const tail = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-TAIL_LINES)
    .join(' | ');
  return tail ? `${how}: ${tail}` : how;
}
