/**
 * `timeshare logs <job>`: the job's events; with `-f`, the live SSE stream until the job finishes,
 * reconnecting with `Last-Event-ID` after a dropped connection, or one the API ended before the
 * final event (it ends a stream when the token it was opened with expires; the reconnection carries
 * a fresh one), so that nothing is lost or repeated.
 */
import type { Command } from 'commander';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { TimeshareError, unwrap, type JobEvent, type TimeshareClient } from '../../sdk/src/index.js';
import type { Context } from '../context.js';
import { describeEvent } from '../format.js';
import { finalStatuses } from './jobs.js';

const RECONNECT_MS = [250, 500, 1000, 2000, 5000];

function print(ctx: Context, e: JobEvent): void {
  console.log(ctx.json ? JSON.stringify(e) : describeEvent(e));
}

const isFinalEvent = (e: JobEvent) => finalStatuses.has(String(e.data.status ?? ''));

async function printPage(ctx: Context, client: TimeshareClient, id: string): Promise<void> {
  let after: string | undefined;
  const all: JobEvent[] = [];
  for (;;) {
    const page = await unwrap(
      client.GET('/v1/jobs/{id}/events', { params: { path: { id }, query: { limit: 1000, after } } }),
    );
    all.push(...page.data);
    if (!page.nextCursor) break;
    after = page.nextCursor;
  }
  if (ctx.json) console.log(JSON.stringify(all, null, 2));
  else for (const e of all) print(ctx, e);
}

/**
 * One connection: prints the events after `cursor.lastId`, advancing it as they are printed (so
 * that a connection that breaks mid-stream resumes after the last event shown); true once the job
 * has ended.
 */
async function streamOnce(
  ctx: Context,
  client: TimeshareClient,
  id: string,
  cursor: { lastId: string | null },
): Promise<boolean> {
  const { data, error, response } = await client.GET('/v1/jobs/{id}/events', {
    params: { path: { id } },
    headers: { Accept: 'text/event-stream', ...(cursor.lastId ? { 'Last-Event-ID': cursor.lastId } : {}) },
    parseAs: 'stream',
  });
  if (!response.ok || !data) throw TimeshareError.from(response.status, error);
  const events = data.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const msg of events) {
    const e = JSON.parse(msg.data) as JobEvent;
    cursor.lastId = msg.id ?? e.id;
    // --json in follow mode prints one event per line (JSON Lines), which scripts can read as it comes.
    print(ctx, e);
    if (isFinalEvent(e)) return true;
  }
  return false;
}

async function follow(ctx: Context, client: TimeshareClient, id: string): Promise<void> {
  const cursor = { lastId: null as string | null };
  let failures = 0;
  for (;;) {
    const before = cursor.lastId;
    try {
      if (await streamOnce(ctx, client, id, cursor)) return;
    } catch (err) {
      // An answer of the API (unknown job, expired key…) will not get better by retrying.
      if (err instanceof TimeshareError && err.status < 500) throw err;
      failures++;
      if (!ctx.json) console.error(`stream interrupted (${(err as Error).message}); reconnecting`);
    }
    if (cursor.lastId !== before) failures = 0;
    await new Promise((r) => setTimeout(r, RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)]));
  }
}

export function logsCommand(program: Command, ctx: () => Context): void {
  program
    .command('logs <job>')
    .description("a job's events; -f follows them live until the job finishes")
    .option('-f, --follow', 'stream new events (reconnects with Last-Event-ID)')
    .action(async (id: string, opts: { follow?: boolean }) => {
      const c = ctx();
      const client = await c.tenant();
      if (opts.follow) await follow(c, client, id);
      else await printPage(c, client, id);
    });
}
