/** What the soak learns about each job the API accepted: from the API while it runs, for the checks at the end. */
import type { Json } from './api-client.js';
import type { JobSpec } from './workload.js';

export interface Tenant {
  name: string;
  id: string;
  apiKey: string;
  token: string;
}

export interface JobEvent {
  id: number;
  type: string;
  data: Json;
  createdAt: string;
}

export interface Checkpoint {
  step: number;
  sha256: string;
  sizeBytes: number;
  firstSeen: number;
}

export interface JobRec {
  id: string;
  tenant: Tenant;
  spec: JobSpec;
  steps: number;
  status: string;
  lastEventId: number;
  events: JobEvent[];
  /** every checkpoint ever listed, by id: one that disappears is a violation */
  checkpoints: Map<string, Checkpoint>;
  /** ended: its events and checkpoints are no longer polled while the soak runs */
  final: boolean;
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export function newJobRec(id: string, tenant: Tenant, spec: JobSpec): JobRec {
  return {
    id,
    tenant,
    spec,
    steps: spec.workflow.steps,
    status: 'queued',
    lastEventId: 0,
    events: [],
    checkpoints: new Map(),
    final: false,
  };
}
