/**
 * The scheduler's round as data: what it reads (a snapshot of the cluster and the queue), how it is
 * tuned (a policy) and what it decides. `schedule(snapshot, policy, now)` (schedule.ts) is a pure
 * function of these; production (scheduler/rounds/), tests and the simulator (scheduler/sim/) build
 * snapshots their own way and call the same code. Times are milliseconds since the epoch.
 */
import type { PlacementMode, StageDevices } from '../../common/node-protocol/index.js';

import type { WaitReason } from '../../common/job-status.js';
import type { StageSample } from '../planner/cost-model.js';
import type { ReplanDecision, ReplanInput } from '../planner/replan.js';

export type { WaitReason };
export type RequestedMode = 'auto' | 'temporal' | 'spatial' | 'hybrid';

export interface DeviceState {
  index: number;
  memoryBytes: number;
  threads: number;
}

/** A node that can take work now (ready, heartbeating). */
export interface NodeState {
  id: string;
  pool: string;
  /** Host memory for the offloaded state of every job placed here (Infinity when unknown). */
  hostMemoryBytes: number;
  devices: DeviceState[];
  /**
   * An admin cordoned it (POST /v1/nodes/{id}/cordon): nothing is placed, grown, moved or reserved
   * onto its devices, while the jobs on them keep running and count toward their tenants' shares.
   * Absent: not cordoned (the simulator's nodes never are).
   */
  cordoned?: boolean;
  /** Cordoned with eviction (Kubernetes' drain): each job running here gets a `drain` notice. */
  evict?: boolean;
}

/** What the planner needs to know about a job's workload (from its spec). */
export interface Workload {
  mode: RequestedMode;
  /** Parameters of the model (from its preset or sizes). */
  parameters: number;
  steps: number;
  promptsPerStep: number;
  groupSize: number;
  /** Tokens per sequence (prompt + completion), roughly. */
  sequenceTokens: number;
  /** Micro-batches per step the spec asks for (honoured with an explicit mode; `auto` lets the planner choose). */
  microBatches?: number;
  /** Steps a generator may run ahead of the learner (0: steps do not overlap). */
  maxWeightLag?: number;
  /**
   * Partial rollouts for a temporal plan: the share of prompt groups a step may carry unfinished
   * into the next. Absent: the planner decides (`auto` with weight lag); 0: off.
   */
  partialTail?: number;
}

/** Measured figures of a job's recent steps (stage_profiles), when it has run before. */
export interface ProfileSummary {
  /** Mean wall seconds of one step, holds and gaps included. */
  stepSeconds: number;
  /** Mean seconds per step the job held its devices (onload, run and offload of every stage). */
  busySeconds: number;
  /** Mean onload + offload seconds per step. */
  switchSeconds: number;
  /** Peak bytes the job's state takes on a device. */
  peakBytes: number;
  /** Steps the figures are drawn from. */
  samples: number;
  /** Per-stage shapes (medians by batch and device count), for the cost model's fit. */
  stages?: StageSample[];
}

/**
 * What a job wants and what it costs, from one function (planner/plan-job.ts `planJob`): the cost
 * model and plan search of the stage-level planner. Fractions are of the job's own step time.
 */
export interface JobPlan {
  devicesMin: number;
  devicesMax: number;
  mode: PlacementMode;
  /** Predicted seconds per step when the job has its devices to itself. */
  stepSeconds: number;
  /** Share of a step its devices are busy (running, onloading, offloading); the rest is idle time. */
  busyFraction: number;
  /** Onload + offload seconds per step (what a switch costs when another job used the device). */
  switchSeconds: number;
  /** Bytes of the job's working set on each device while it runs (must fit the device). */
  deviceBytes: number;
  /** Bytes of its offloaded state in host memory while another job runs. */
  hostBytes: number;
  /** 0..1: how much of the plan comes from measurements rather than the prior. */
  confidence: number;
  /** Micro-batches per step the plan pipelines (1 for temporal). */
  microBatches: number;
  /** Devices that generate and that train (equal to the job's devices when temporal; they may overlap when hybrid). */
  generateDevices: number;
  trainDevices: number;
  /** The search's predicted step time on the devices, off-device time excluded. */
  predictedStepSeconds: number;
  /** Partial rollouts of a temporal plan (share of groups carried; 0: off). */
  partialTail: number;
  /**
   * The prior's step time for this plan (what `stepSeconds` blends in at `1 − confidence`), for the
   * pool's pace (pace.ts); absent: not known, and the step is taken as it is.
   */
  priorStepSeconds?: number;
}

export interface RunningJob {
  id: string;
  tenantId: string;
  pool: string;
  priority: number;
  nodeId: string;
  devices: number[];
  /**
   * The fewest devices its spec asks for (`resources.devices`); holding more, it grew into idle
   * devices (`maxDevices`) and gives them back to a job that waits for them (preempt.ts, `shrink`).
   * Absent: what it holds.
   */
  minDevices?: number;
  plan: JobPlan;
  placedAt: number;
  /**
   * When this run's job process started (placed → running); null while it is placed and not yet
   * started. Its minimum run time counts from here (min-run.ts): on a loaded machine a job was
   * preempted 5 s before its first step when it counted from placement. Absent: `placedAt` (jobs
   * of the simulator and of unit tests start when placed).
   */
  runningSince?: number | null;
  /** When it last entered the queue before this placement (a job placed on loan entered after the aged job it jumped). */
  queuedAt: number;
  /** Set while a preemption notice is out: the job is checkpointing and will give its devices back. */
  preemptRequestedAt: number | null;
  /** The notice's reason; a job moving to a new plan (`replan`) gets its devices back, nobody claims them. */
  preemptReason?: PreemptDecision['reason'] | null;
  /**
   * Where a job under notice comes back to: its own devices (`replan`) or those compaction chose
   * (`compact`). Nobody joins or claims them meanwhile.
   */
  returnTo?: NodeDevices | null;
  /** The queued job a notice frees this job's devices for: it goes first in the pool's order. */
  preemptFor?: string | null;
  /** Its tenant paused it: the round gives it a `pause` notice (schedule.ts), minimum run time or not. */
  paused?: boolean;
  /** Steps done so far (from its metrics or checkpoints) and steps in all. */
  stepsDone: number;
  steps: number;
  /** What re-planning needs (its spec's workload, profile, last decision); absent: not re-planned. */
  replan?: ReplanInput;
}

export interface QueuedJob {
  id: string;
  tenantId: string;
  pool: string;
  priority: number;
  queueSeq: number;
  /** When the job (last) entered the queue. */
  queuedAt: number;
  createdAt: number;
  /** Devices the job needs at least / can use at most, from its spec. */
  devices: number;
  maxDevices: number;
  /** Bytes per device the spec asks for (memoryPerDeviceMiB), or null. */
  memoryPerDeviceBytes: number | null;
  workload: Workload;
  /** Steps already done (a preempted or requeued job resumes). */
  stepsDone: number;
  attempts: number;
  /** Why it last went back to the queue, or null for a fresh submission. */
  requeueReason: 'preempted' | 'node_lost' | 'crashed' | 'drained' | null;
  /** Measured figures from its earlier runs, if any. */
  profile: ProfileSummary | null;
  /**
   * A job that left its devices to change plan in place (a `replan` move) or was moved by compaction
   * (`compact`): its devices are given to it, before anyone else is considered, if they are still free.
   */
  returnTo?: NodeDevices | null;
  /** A job moved by compaction: the job its move made room for (it stays first in the order). */
  returnFor?: string | null;
  /**
   * A job preempted by reclaim, aging or priority: the job its preemption made room for. That job
   * goes first in the order for a minimum run time after this one's requeue.
   */
  preemptedFor?: string | null;
}

/** Some devices of one node. */
export interface NodeDevices {
  nodeId: string;
  devices: number[];
}

export interface TenantState {
  id: string;
  weight: number;
  maxConcurrentDevices: number;
  maxDevicesPerJob: number;
  /** Device-hours allowed this month and device-seconds used this month. */
  deviceHoursPerMonth: number;
  periodDeviceSeconds: number;
  /** Devices its placed and running jobs hold now (a time-shared device counts for each job). */
  activeDevices: number;
  /** Decayed usage per pool: device-seconds and device-memory byte-seconds (half-life decay). */
  usage: Record<string, { deviceSeconds: number; memoryByteSeconds: number }>;
}

export interface Snapshot {
  nodes: NodeState[];
  tenants: TenantState[];
  running: RunningJob[];
  /** Every queued job (any order; the round orders them). */
  queued: QueuedJob[];
  /** Profiles of running jobs, by job id (queued jobs carry theirs). */
  profiles?: ReadonlyMap<string, ProfileSummary>;
}

export interface Policy {
  /** Upper bound of jobs that may share one device in time. */
  maxJobsPerDevice: number;
  /** A time-share group is refused if its jobs' combined busy fractions (switches included) exceed this. */
  maxGroupLoad: number;
  /** A time-share group is refused if more than this fraction of device time would go to switches. */
  maxSwitchFraction: number;
  /** Time-sharing on or off (off: exclusive devices only, the Kueue-like and FIFO baselines). */
  timeSharing: boolean;
  /** Order tenants by weighted dominant share (off: FIFO by arrival, priority first). */
  fairShare: boolean;
  /** Later jobs may start when an earlier one does not fit (off: strict FIFO within a pool). */
  backfill: boolean;
  /**
   * Devices an aged job waits for are lent rather than held idle: behind an aged job that does not
   * fit, any job that fits may start, and the aged job takes the devices back by preemption (with
   * notice and a checkpoint) from jobs placed on them after it aged. Off: only jobs predicted to end
   * before the aged job's reservation start (Slurm's backfill).
   */
  lendReservedDevices: boolean;
  /**
   * A job whose tenant would borrow does not join a time-share group holding a job of a tenant
   * within its entitlement (unless aged).
   */
  protectOwnerDevices: boolean;
  /** Preemption on or off. */
  preemption: boolean;
  /**
   * A job that fits nowhere while enough devices are free, spread over nodes, gets one node cleared
   * by moving its jobs (notice, checkpoint, restart) to free devices elsewhere (compact.ts).
   */
  compaction: boolean;
  /**
   * A preemption's victims, chosen in Kueue's order (share, priority, most recently placed), are
   * each swapped for a job of the same tenant and priority that holds fewer devices where the
   * preemptor fits with that one gone instead (preempt.ts). Off: Kueue's choice as it is.
   */
  smallerVictims: boolean;
  /**
   * Compaction may also move a job into a time-share group of its width on another node (one whose
   * load admits it), not only onto free devices: the room for a wide job then need not already be
   * free somewhere in the pool.
   */
  compactIntoGroups: boolean;
  /**
   * A job of a tenant holding less than its entitlement, waiting at least this long (seconds), for
   * which no node can be cleared by preemption alone, gets one cleared by preempting the jobs there
   * the share rules allow and moving the others onto devices freed from such jobs elsewhere
   * (reclaim-compact.ts). Null: off. Needs `compaction` and `fairShare`.
   */
  reclaimCompactionAfterSeconds: number | null;
  /**
   * Once no job of the pool waits for devices, a job slowed by its time-share partners moves to
   * free devices when its remaining steps would save many times the move's cost (spread.ts).
   */
  spreadWhenIdle: boolean;
  /** A job runs at least this long between preemptions. */
  minRunSeconds: number;
  /** How long a preempted job may take to checkpoint before its devices are taken back. */
  preemptGraceSeconds: number;
  /** A job queued longer than this goes first in its pool and may preempt; no job waits past it plus the longest run it waits for. */
  agingBoundSeconds: number;
  /** Weight of decayed past usage against current usage when ordering tenants (0 = current only). */
  usageHistoryWeight: number;
  /** Crash-looping jobs wait this × 2^(attempts−1) seconds before the next attempt (capped at 5 min). */
  crashBackoffSeconds: number;
  /** Running `auto` jobs are re-planned from their profiles and moved when the gain beats the cost. */
  replanning: boolean;
  /** Seconds a moved job takes to be placed again and start (part of a move's cost). */
  restartSeconds: number;
}

export interface PlaceDecision {
  jobId: string;
  tenantId: string;
  queueSeq: number;
  nodeId: string;
  devices: number[];
  mode: PlacementMode;
  stages: StageDevices;
  threadsPerDevice: number;
  memoryBytes: number;
  plan: JobPlan;
  /** Other jobs on these devices at placement (0 = exclusive). */
  sharedWith: number;
}

export interface PreemptDecision {
  jobId: string;
  tenantId: string;
  /** `priority`: a higher-priority job of the same tenant; `reclaim`: a tenant under its share takes back what others borrowed; `aging`: a job past the aging bound; `shrink`: the job grew into idle devices (`maxDevices`) and a job that fits in them waits (it restarts at its minimum); `replan`: the job moves to a faster plan; `compact`: the job moves to free devices on another node so a wider job gets a whole one; `spread`: nobody waits, and the job moves off a crowded device onto free ones (it is its own `forJobId`); `pause`: its tenant paused it (its own `forJobId`; nobody claims its devices); `drain`: an admin cordoned its node with eviction (its own `forJobId`; minimum run time or not; it resumes elsewhere). */
  reason: 'priority' | 'reclaim' | 'aging' | 'shrink' | 'replan' | 'compact' | 'spread' | 'pause' | 'drain';
  /** The queued job the devices are freed for. */
  forJobId: string;
  /** `compact` and `spread`: the devices the job moves to. */
  moveTo?: NodeDevices;
}

/**
 * A notice taken back before its job left, its reason gone (withdraw.ts): the job keeps its devices
 * and runs on. `reason` is the notice's; `because`: its tenant resumed it (`pause`), its node is no
 * longer cordoned with eviction (`drain`), or the job it freed devices for no longer waits.
 */
export interface WithdrawDecision {
  jobId: string;
  tenantId: string;
  reason: PreemptDecision['reason'];
  because: 'job_resumed' | 'eviction_lifted' | 'claimant_left';
}

export interface QueueEntryView {
  jobId: string;
  pool: string;
  /** 1-based position in the pool's order after this round, and among the tenant's own queued jobs. */
  position: number;
  tenantPosition: number;
  waitReason: WaitReason;
  /** Estimated start (ms), or null when it cannot be estimated (no capacity at all). */
  estimatedStartAt: number | null;
  /**
   * Estimated end of its run (ms): from that start, its remaining steps at its plan's pace, slowed
   * while it shares devices with a job it joins; null without a start.
   */
  estimatedEndAt: number | null;
}

export interface TenantShareView {
  tenantId: string;
  pool: string;
  /** Weighted dominant share of the pool held now, and what its weight entitles it to (0..1). */
  share: number;
  entitlement: number;
  /** Devices held now and devices wanted by its queued jobs. */
  devices: number;
  demand: number;
}

export interface Decisions {
  place: PlaceDecision[];
  preempt: PreemptDecision[];
  /**
   * Notices withdrawn, their reason gone (withdraw.ts); written before `preempt`, which may give
   * the same job a new notice in the same round.
   */
  withdraw: WithdrawDecision[];
  /** Jobs whose preemption grace ran out: taken back and requeued. */
  takeBack: { jobId: string; tenantId: string }[];
  queue: QueueEntryView[];
  shares: TenantShareView[];
  /** Re-planning decisions about running jobs: moves (also in `preempt`), declines, measured gains. */
  replan: ReplanDecision[];
}
