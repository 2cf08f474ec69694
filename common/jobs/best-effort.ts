/**
 * Redis work that follows a commit (the scheduler's wake-up, event notices that wake SSE streams, a
 * control message to a node, the scheduler's queue view): each only hurries what happens anyway
 * (the scheduler's round at least every `TIMESHARE_ROUND_INTERVAL_MS`, a stream's 5 s poll, the
 * daemon's assignment poll, the next round's view), so none may hold what committed: an API
 * answer, a node's registration, the liveness sweep, or a scheduler round and with it the renewal
 * of its lease. A connection that is not `ready` is not written to at all: its commands would wait
 * out ioredis's reconnection attempts (up to seconds each, growing) and then fail. On a ready one
 * they are waited for at most `boundMs`; past it they go on in the background. What failed or was
 * skipped is logged once an outage per connection, until a notice gets through again.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/** Long enough for a notice on a healthy connection (well under a millisecond), short for a person. */
export const NOTICE_BOUND_MS = 200;

/** Connections whose outage is logged already. */
const outageLogged = new WeakSet<Redis>();

export type NoticeOutcome = 'sent' | 'skipped' | 'failed' | 'pending';
export type NoticeLog = Pick<Logger, 'warn' | 'info'>;

export async function bestEffortNotice(
  redis: Redis,
  log: NoticeLog,
  what: string,
  send: () => Promise<unknown>,
  boundMs = NOTICE_BOUND_MS,
): Promise<NoticeOutcome> {
  const outage = (err: unknown, outcome: NoticeOutcome): NoticeOutcome => {
    if (!outageLogged.has(redis)) {
      outageLogged.add(redis);
      log.warn(
        { err: err instanceof Error ? err.message : String(err), what },
        'Redis notices skipped while Redis is unavailable; their readers catch up by polling',
      );
    }
    return outcome;
  };
  if (redis.status !== 'ready') return outage(`redis connection is ${redis.status}`, 'skipped');
  let timer: NodeJS.Timeout | undefined;
  const sent = send().then(
    (): NoticeOutcome => {
      if (outageLogged.delete(redis)) log.info({ what }, 'Redis notices are sent again');
      return 'sent';
    },
    (err: unknown) => outage(err, 'failed'),
  );
  const late = new Promise<NoticeOutcome>((resolve) => {
    timer = setTimeout(() => resolve('pending'), boundMs);
    timer.unref();
  });
  try {
    return await Promise.race([sent, late]);
  } finally {
    clearTimeout(timer);
  }
}
