// A notice whose reason went before its job left is withdrawn (withdraw.ts): the tenant resumed the
// job it paused, the node's eviction was lifted, or the job the notice freed devices for no longer
// waits. One that still has its reason stands, however the shares moved since: judged again, a
// reclaim would be withdrawn and given back round after round.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import type { Decisions, NodeState, PreemptDecision, RunningJob, Snapshot } from '../types.js';
import { T0, node, queued, running, snapshot, tenant } from './builders.js';

const policy = { ...defaultPolicy, maxJobsPerDevice: 1 };
const graceMs = policy.preemptGraceSeconds * 1000;

/** A job on n1's device 0 under a notice given 10 s ago (or `ago` ms), for `forJobId`. */
const noticed = (
  reason: PreemptDecision['reason'],
  forJobId: string | null,
  over: Partial<RunningJob> = {},
  ago = 10_000,
): RunningJob =>
  running('r', 'a', 'n1', [0], {
    preemptRequestedAt: T0 - ago,
    preemptReason: reason,
    preemptFor: forJobId,
    ...over,
  });

interface Case {
  name: string;
  job: RunningJob;
  nodes?: NodeState[];
  /** Queued jobs besides the claimant's absence: `q` waits unless left out. */
  waiting?: string[];
  /** Other running jobs (a claimant placed elsewhere). */
  others?: RunningJob[];
  /** The withdrawal's `because`, or null: the notice stands. */
  want: Decisions['withdraw'][number]['because'] | null;
}

const cases: Case[] = [
  { name: 'pause: the tenant resumed the job', job: noticed('pause', 'r'), want: 'job_resumed' },
  { name: 'pause: still paused', job: noticed('pause', 'r', { paused: true }), want: null },
  {
    name: 'drain: the node was uncordoned',
    job: noticed('drain', 'r'),
    nodes: [node('n1', 2)],
    want: 'eviction_lifted',
  },
  {
    name: 'drain: cordoned again without eviction',
    job: noticed('drain', 'r'),
    nodes: [node('n1', 2, { cordoned: true, evict: false })],
    want: 'eviction_lifted',
  },
  {
    name: 'drain: still cordoned with eviction',
    job: noticed('drain', 'r'),
    nodes: [node('n1', 2, { cordoned: true, evict: true })],
    want: null,
  },
  {
    name: 'drain: its node is not ready (draining, lost): its cordon is not known',
    job: noticed('drain', 'r'),
    nodes: [node('n2', 2)],
    want: null,
  },
  { name: 'reclaim: the claimant was cancelled', job: noticed('reclaim', 'gone'), want: 'claimant_left' },
  { name: 'priority: the claimant was cancelled', job: noticed('priority', 'gone'), want: 'claimant_left' },
  { name: 'aging: the claimant was paused', job: noticed('aging', 'gone'), want: 'claimant_left' },
  { name: 'shrink: the claimant left the queue', job: noticed('shrink', 'gone'), want: 'claimant_left' },
  {
    name: 'compact: the wide job it made room for left',
    job: noticed('compact', 'gone', { returnTo: { nodeId: 'n1', devices: [1] } }),
    want: 'claimant_left',
  },
  { name: 'reclaim: the claimant still waits', job: noticed('reclaim', 'q'), want: null },
  {
    name: 'compact: the claimant was placed elsewhere: its devices stay planned for the queue',
    job: noticed('compact', 'placed', { returnTo: { nodeId: 'n1', devices: [1] } }),
    others: [running('placed', 'b', 'n1', [1])],
    want: null,
  },
  { name: 'reclaim: no claimant on record', job: noticed('reclaim', null), want: null },
  { name: 'replan: the job moves for its own sake', job: noticed('replan', 'r'), want: null },
  { name: 'spread: the job moves for its own sake', job: noticed('spread', 'r'), want: null },
  {
    name: 'reclaim with the claimant gone, but its tenant paused the job since',
    job: noticed('reclaim', 'gone', { paused: true }),
    want: null,
  },
  {
    name: 'reclaim with the claimant gone, on a node now evicting',
    job: noticed('reclaim', 'gone'),
    nodes: [node('n1', 2, { cordoned: true, evict: true })],
    want: null,
  },
];

describe('schedule(): withdrawing a notice whose reason went', () => {
  for (const c of cases)
    it(c.name, () => {
      const d = schedule(
        snapshot({
          nodes: c.nodes ?? [node('n1', 2)],
          tenants: [tenant('a'), tenant('b')],
          running: [c.job, ...(c.others ?? [])],
          queued: (c.waiting ?? ['q']).map((id) => queued(id, 'b', { devices: 2, maxDevices: 2 })),
        }),
        policy,
        T0,
      );
      assert.deepEqual(
        d.withdraw,
        c.want ? [{ jobId: 'r', tenantId: 'a', reason: c.job.preemptReason, because: c.want }] : [],
      );
      if (c.want) assert.deepEqual(d.takeBack, [], 'a withdrawn job keeps its devices');
    });

  it('withdraws rather than takes back a job whose grace ran out, and takes back one whose notice stands', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a'), tenant('b')],
        running: [
          noticed('reclaim', 'gone', {}, graceMs + 1000),
          running('s', 'a', 'n1', [1], {
            preemptRequestedAt: T0 - graceMs - 1000,
            preemptReason: 'reclaim',
            preemptFor: 'q',
          }),
        ],
        queued: [queued('q', 'b')],
      }),
      policy,
      T0,
    );
    assert.deepEqual(
      d.withdraw.map((w) => w.jobId),
      ['r'],
    );
    assert.deepEqual(
      d.takeBack.map((t) => t.jobId),
      ['s'],
    );
  });
});

/**
 * The next round's snapshot after `d`, as production writes it: notices withdrawn first, then the
 * new ones (given at `now`), placements running, take-backs queued. Enough for these rounds.
 */
function applied(s: Snapshot, d: Decisions, now: number): Snapshot {
  const withdrawn = new Set(d.withdraw.map((w) => w.jobId));
  const notice = new Map(d.preempt.map((p) => [p.jobId, p]));
  const takenBack = new Set(d.takeBack.map((t) => t.jobId));
  const next = s.running
    .filter((r) => !takenBack.has(r.id))
    .map((r): RunningJob => {
      const cleared = withdrawn.has(r.id)
        ? { ...r, preemptRequestedAt: null, preemptReason: null, preemptFor: null, returnTo: null }
        : r;
      const p = notice.get(r.id);
      return p
        ? {
            ...cleared,
            preemptRequestedAt: now,
            preemptReason: p.reason,
            preemptFor: p.forJobId,
            returnTo: p.moveTo ?? null,
          }
        : cleared;
    });
  const placed = new Map(d.place.map((p) => [p.jobId, p]));
  for (const q of s.queued) {
    const p = placed.get(q.id);
    if (p) next.push(running(q.id, q.tenantId, p.nodeId, p.devices, { placedAt: now, queuedAt: q.queuedAt }));
  }
  return snapshot({ ...s, running: next, queued: s.queued.filter((q) => !placed.has(q.id)) });
}

/** Every notice given and withdrawn over `rounds` rounds a second apart, from `s` at T0. */
function rounds(s: Snapshot, n: number, between: (s: Snapshot, round: number) => Snapshot = (x) => x) {
  const given: string[] = [];
  const withdrawn: string[] = [];
  let now = T0;
  for (let i = 0; i < n; i++) {
    s = between(s, i);
    const d = schedule(s, policy, now);
    given.push(...d.preempt.map((p) => `${i}:${p.jobId}→${p.forJobId}`));
    withdrawn.push(...d.withdraw.map((w) => `${i}:${w.jobId}`));
    s = applied(s, d, now);
    now += 1000;
  }
  return { given, withdrawn, last: s };
}

describe('schedule(): withdrawal does not flap', () => {
  // Tenant a borrows both devices of n1; tenant b, under its entitlement, waits with two jobs.
  const start = snapshot({
    nodes: [node('n1', 2)],
    tenants: [tenant('a'), tenant('b')],
    running: [running('ra1', 'a', 'n1', [0]), running('ra2', 'a', 'n1', [1])],
    queued: [queued('qb', 'b'), queued('qb2', 'b')],
  });

  it("a reclaim stands while its claimant waits, though the victim's leaving moved the shares", () => {
    // Within the grace: the notice is out every round, nobody checkpointed yet.
    const r = rounds(start, 10);
    assert.deepEqual(r.given, ['0:ra1→qb'], 'one notice, given once');
    assert.deepEqual(r.withdrawn, [], 'and never withdrawn');
  });

  it('a reclaim whose claimant was cancelled is withdrawn once, and nobody is noticed for nothing', () => {
    // Both of b's jobs cancelled after the first round: nothing claims a's devices any more.
    const r = rounds(start, 10, (s, i) => (i === 1 ? { ...s, queued: [] } : s));
    assert.deepEqual(r.given, ['0:ra1→qb']);
    assert.deepEqual(r.withdrawn, ['1:ra1']);
    assert.ok(
      r.last.running.every((j) => j.preemptRequestedAt === null),
      'a keeps both devices',
    );
  });

  it("a claimant cancelled while another of its tenant's jobs waits: the notice passes to it, once", () => {
    const r = rounds(start, 10, (s, i) =>
      i === 1 ? { ...s, queued: s.queued.filter((q) => q.id !== 'qb') } : s,
    );
    // Withdrawn and given again in one round (its grace restarts), then it stands.
    assert.deepEqual(r.given, ['0:ra1→qb', '1:ra1→qb2']);
    assert.deepEqual(r.withdrawn, ['1:ra1']);
  });

  it('an uncordoned node keeps its jobs, and cordoning it again with eviction gives notices again', () => {
    const cordoned = (evict: boolean) => node('n1', 2, { cordoned: true, evict });
    const s0 = snapshot({
      nodes: [cordoned(true), node('n2', 2)],
      tenants: [tenant('a')],
      running: [running('ra1', 'a', 'n1', [0])],
      queued: [],
    });
    const r = rounds(s0, 6, (s, i) =>
      i === 2
        ? { ...s, nodes: [node('n1', 2), node('n2', 2)] }
        : i === 4
          ? { ...s, nodes: [cordoned(true), node('n2', 2)] }
          : s,
    );
    assert.deepEqual(r.given, ['0:ra1→ra1', '4:ra1→ra1']);
    assert.deepEqual(r.withdrawn, ['2:ra1']);
  });
});
