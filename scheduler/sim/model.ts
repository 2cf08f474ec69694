/**
 * What the simulator simulates: a cluster, tenants, and RL jobs described by their step shape.
 * A workload (synthetic, replayed or read from a file) is only data of these types; the engine
 * turns it into events. Times are seconds of simulated time from the start of the run.
 */

export interface ClusterSpec {
  nodes: number;
  devicesPerNode: number;
  deviceMemoryBytes: number;
  /** Host memory per node, where offloaded state waits while another job holds a device. */
  hostMemoryBytes: number;
}

export interface TenantSpec {
  id: string;
  weight: number;
  /** Devices its jobs may hold at once (a time-shared device counts for each job). */
  maxConcurrentDevices: number;
  deviceHoursPerMonth: number;
}

/**
 * The quotas of a workload that has none (the Philly trace has none; the synthetic tenants are
 * given none): limits no run reaches. Not the cluster's size: time-sharing counts a device once
 * for each job on it, so a quota of the cluster's size held a lone tenant's jobs to one per device
 * (Philly seed 2: its only two tenants' jobs waited with reason `quota` beside devices a job of
 * theirs could have shared).
 */
export const NO_QUOTA = { maxConcurrentDevices: 1e6, deviceHoursPerMonth: 1e6 } as const;

/**
 * A simulated device's speed in the planner prior's units (engine threads: the prior's per-token,
 * per-parameter figures were measured on one CPU thread of the engine). The rl-job rules draw GPU
 * step times, which the prior at one thread put 273–430× too long (geometric mean per workload,
 * seeds 1–5 and the physics check's cold jobs; 385 over every synthetic and Philly job): a new
 * job's predicted run time (backfill windows, reservations, estimated starts) then said weeks where
 * the job took hours, and its switch share of a step looked negligible. Calibrated as a pool's
 * device figures would be on real hardware: right on average, each job's guess still off by the
 * spread of its draw.
 */
export const SIM_DEVICE_THREADS = 385;

/**
 * One RL step: `turns` rounds of generation (held) each followed by environment latency (idle),
 * then reward/verifier time (idle), training (held) and the weight sync (held). Generation lasts
 * until its longest sequence ends: completion lengths are lognormal with `tailSigma`, so most of a
 * batch finishes early and a few stragglers set the step's length.
 */
export interface StepShape {
  turns: number;
  /** Mean seconds of one turn's generation over steps (the tail included). */
  generateSeconds: number;
  /** Log-space sigma of completion lengths (0: every step the same). */
  tailSigma: number;
  envSeconds: number;
  rewardSeconds: number;
  trainSeconds: number;
  syncSeconds: number;
}

export interface SimJobSpec {
  id: string;
  tenant: string;
  /** Submission time, seconds from the start. */
  arrival: number;
  devices: number;
  priority: number;
  steps: number;
  parameters: number;
  /** Working set on each device while the job runs (its reservation). */
  deviceBytes: number;
  /** Bytes per device of the training state: what a training hold's switch moves, and a checkpoint writes. */
  stateBytesPerDevice: number;
  /** Bytes per device a generation hold needs resident (the weights); the training state stays offloaded. */
  generateBytesPerDevice: number;
  shape: StepShape;
  /** A checkpoint (held, its cost from the state's bytes) after every this many steps. */
  checkpointEvery: number;
  /**
   * A recurring job: its tenant ran this workload before, so it is submitted with that run's
   * measured profile instead of leaving the planner to its prior.
   */
  recurring?: boolean;
  /**
   * Steps generation may run ahead of training (PipelineRL-style asynchronous RL); 0 or absent:
   * on-policy. Only a job that allows it can overlap its steps in a spatial plan, or carry its
   * stragglers into the next step (partial rollouts) in a temporal one.
   */
  maxWeightLag?: number;
  /** Partial rollouts as the spec sets them (0: off); absent: the planner decides. */
  partialTail?: number;
}

export interface SimWorkload {
  name: string;
  cluster: ClusterSpec;
  tenants: TenantSpec[];
  jobs: SimJobSpec[];
  /** Stop at this simulated time even if jobs remain (saturation runs); absent: run to the end. */
  horizonSeconds?: number;
}

/** Physical figures the engine uses; see docs/simulator.md for where they come from. */
export interface SimPhysics {
  /** Offload and onload bandwidth per device (bench:engine: 7.84 / 7.90 GB/s). */
  switchBytesPerSecond: number;
  /** Checkpoint write bandwidth per device to shared storage. */
  checkpointBytesPerSecond: number;
  /** Decision cost charged per job the round decides (Omega's simulator: 0.01 s). */
  decisionSecondsPerJob: number;
  /** Rounds run on every event and at least this often while jobs wait or notices are out. */
  tickSeconds: number;
  /** Half-life of the decayed usage fed to fair share. */
  usageHalfLifeSeconds: number;
}

export const defaultPhysics: SimPhysics = {
  switchBytesPerSecond: 7.8e9,
  checkpointBytesPerSecond: 2e9,
  decisionSecondsPerJob: 0.01,
  tickSeconds: 30,
  usageHalfLifeSeconds: 3600,
};

/** Mean seconds of one step the job holds its devices, and of one step in all (no waits, no switches). */
export function stepFigures(s: StepShape): { held: number; step: number; idleFraction: number } {
  const held = s.turns * s.generateSeconds + s.trainSeconds + s.syncSeconds;
  const step = held + s.turns * s.envSeconds + s.rewardSeconds;
  return { held, step, idleFraction: step > 0 ? 1 - held / step : 0 };
}

export const GB = 1e9;
export const GiB = 1024 ** 3;
