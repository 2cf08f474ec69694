/**
 * A reader that stops early (`timeshare … | head`) closes the pipe, and Node reports the next write
 * as an EPIPE 'error' event that, unhandled, crashes with a stack trace. Nothing written after that
 * could be read, so the CLI stops there quietly, as a Unix tool killed by SIGPIPE does.
 */

/** The status a shell shows for a process killed by SIGPIPE (128 + 13), which `set -o pipefail` sees. */
export const BROKEN_PIPE_EXIT_CODE = 141;

export function exitQuietlyOnBrokenPipe(...streams: NodeJS.WriteStream[]): void {
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(BROKEN_PIPE_EXIT_CODE);
      // Any other write error is as fatal as it was without this listener.
      throw err;
    });
  }
}
