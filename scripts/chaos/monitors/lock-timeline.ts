/**
 * Every device hold the lock granted, read from the lock's timeline stream in Redis and kept here,
 * because a Redis wipe deletes the stream: the exclusivity checks at the end need all of it.
 */
import type { Redis } from 'ioredis';
import { holdsOf, recordsOf } from '../../../common/device-lock/timeline.js';

export interface Hold {
  device: string;
  node: string;
  job: string;
  stage: string;
  holder: string;
  /** the job process holding it (the last field of the holder's name) */
  pid: number;
  token: number;
  /** Redis server ms, as the lock writes them */
  start: number;
  end: number | null;
  reason: string | null;
}

const PAGE = 2000;

export class LockTimeline {
  /** by device and fencing token */
  readonly holds = new Map<string, Hold>();
  /** Redis server ms of each wipe: a hold still open then was erased by it, not released */
  readonly wipes: number[] = [];
  /** the job each job process held devices for: how the soak finds job processes to kill or watch */
  readonly pidJob = new Map<number, string>();
  private lastStreamId = '0-0';

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async redisTimeMs(): Promise<number> {
    const [s, us] = await this.redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  async poll(): Promise<void> {
    const key = `${this.prefix}:lock:timeline`;
    for (;;) {
      const entries = (await this.redis.xrange(key, `(${this.lastStreamId}`, '+', 'COUNT', PAGE)) as [
        string,
        string[],
      ][];
      if (!entries.length) return;
      for (const [id, flat] of entries) {
        this.lastStreamId = id;
        for (const rec of recordsOf(flat)) for (const h of holdsOf(rec, null)) this.record(h);
      }
      if (entries.length < PAGE) return;
    }
  }

  private record(h: ReturnType<typeof holdsOf>[number]): void {
    const i = h.interval;
    const pid = Number(i.holder.split(':').at(-1));
    const prev = this.holds.get(h.key);
    this.holds.set(h.key, {
      device: i.device,
      node: i.device.split('/')[0]!,
      job: i.job,
      stage: i.stage,
      holder: i.holder,
      pid,
      token: i.token,
      start: i.start,
      end: h.ends ? i.end : (prev?.end ?? null),
      reason: h.ends ? i.reason : (prev?.reason ?? null),
    });
    if (Number.isFinite(pid)) this.pidJob.set(pid, i.job);
  }

  /**
   * Reads what the stream holds, runs the wipe, and notes when it happened. The stream is then
   * read again from the time before the wipe: its new entries have ids after that.
   */
  async wipe(deleteKeys: () => Promise<number>): Promise<number> {
    const before = await this.redisTimeMs();
    await this.poll().catch(() => {});
    const n = await deleteKeys();
    this.wipes.push(await this.redisTimeMs());
    this.lastStreamId = `${before}-0`;
    return n;
  }
}
