/**
 * The window and paging options of the device-lock timelines (`admin nodes timeline`, `admin pools
 * timeline`). The API lists holds oldest first from `since`, and the node route's `since` defaults
 * to the beginning of the stream: without one, an operator saw the oldest 1,000 holds and nothing
 * current. So the CLI always sends a window, the last 15 minutes unless told otherwise (the pool
 * route's own default), and names the next page's cursor when there is one.
 */
import type { Command } from 'commander';
import { parseInteger } from './numeric-options.js';
import { parseSince } from './time-options.js';

export const DEFAULT_SINCE = '15m';

export interface TimelineOptions {
  since?: number;
  after?: string;
  limit?: number;
}

/** `apiLimit`: the route's own page size, the one a page has without --limit. */
export function addTimelineOptions(cmd: Command, apiLimit: number): Command {
  return (
    cmd
      .option(
        '--since <time>',
        'holds that ended at or after this time, and those still open: an ISO time or a duration ' +
          `before now such as 10m, 2h, 1d (default: ${DEFAULT_SINCE}, the last 15 minutes)`,
        parseSince,
      )
      // Appended to the command that printed it, the cursor goes on from where that page ended:
      // the --since beside it is then moot (the API ignores `since` beside a cursor).
      .option(
        '--after <cursor>',
        'the nextCursor of a previous page ("more: --after …"); --since is then moot',
      )
      .option('--limit <n>', `holds a page lists at most (default: ${apiLimit})`, parseInteger)
  );
}

/** The query to send: the window only on a first page (a later one is where its cursor says). */
export function timelineQuery(opts: TimelineOptions): { since?: number; after?: string; limit?: number } {
  const q: { since?: number; after?: string; limit?: number } = {};
  if (opts.after !== undefined) q.after = opts.after;
  else q.since = opts.since ?? parseSince(DEFAULT_SINCE);
  if (opts.limit !== undefined) q.limit = opts.limit;
  return q;
}

/** The hint `jobs list` prints too, when the page did not reach the newest hold. */
export function printMore(nextCursor: string | null): void {
  if (nextCursor) console.log(`more: --after ${nextCursor}`);
}
