/**
 * The IPC contract between the daemon and a job process (one child per job, so one job's crash
 * cannot take the daemon or another job down). The child reports; the daemon forwards to the
 * control plane in order and sends control requests down.
 */
import type { StageProfileReport, SavedCheckpoint } from '../common/jobs/reports.js';
import type { JobSpec } from '../common/job-spec.js';
import type {
  FinishReason,
  NodeJobEvent,
  NodeOutcome,
  Placement,
  WireMetricPoint,
} from '../common/node-protocol/index.js';
import type { StorageConfig } from '../common/storage/index.js';

export interface RunnerStart {
  t: 'start';
  jobId: string;
  nodeId: string;
  spec: JobSpec;
  placement: Placement;
  priority: number;
  attempt: number;
  /** Storage directory key of the checkpoint to resume from, and the step it holds. */
  resume: { dirKey: string; step: number; fromOwnRun: boolean } | null;
  storage: StorageConfig;
  redisUrl: string;
  lockPrefix: string;
  leaseMs: number;
  /** How long the job process may run before an `alive` from the daemon says more (supervision.ts). */
  runForMs: number;
  /** The reactive balancer of spatial placements (worker-node/balancer.ts); absent: on, defaults. */
  balancer?: { enabled: boolean; threshold?: number };
}

/** What the daemon asks of a running job. */
export type ControlAction = 'cancel' | 'preempt' | 'drain';

/**
 * `alive`: the daemon is still there, and the job process may run `forMs` more (supervision.ts). `withdraw`: the scheduler withdrew the
 * preemption notice it passed on (its assignment no longer carries it): run on, if not stopping yet.
 */
export type DaemonToRunner =
  RunnerStart | { t: ControlAction } | { t: 'alive'; forMs: number } | { t: 'withdraw' };

/** What a job process can report; `crashed` is the daemon's verdict on a child that died. */
export type Outcome = Exclude<NodeOutcome, 'crashed'>;

/** How a job process's run ended; `reason` says why a `succeeded` one ended where it did. */
export interface RunEnd {
  outcome: Outcome | 'cancelled';
  error: string | null;
  reason?: FinishReason | null;
}

export type RunnerToDaemon =
  | { t: 'started'; resumedFromStep: number | null }
  | {
      t: 'report';
      /** Non-finite values by name: the channel is JSON, which writes NaN as null. */
      metrics: WireMetricPoint[];
      profiles: StageProfileReport[];
      deviceSeconds: number;
      /** Decisions taken inside the placement (the reactive balancer's moves), sent on as job events. */
      events?: NodeJobEvent[];
      /** Time each stage waited for its devices; for the daemon's metrics, not sent on. */
      lockWaits?: { stage: string; seconds: number }[];
    }
  /** The daemon adds the run (`queueSeq`) when it relays it: a job process runs one run only. */
  | ({ t: 'checkpoint' } & SavedCheckpoint)
  | { t: 'finished'; outcome: Outcome; error: string | null; reason?: FinishReason | null }
  | { t: 'cancelled' }
  /** Device indexes on this node and the bytes the job holds on each now. */
  | { t: 'occupancy'; devices: number[]; bytes: number };
