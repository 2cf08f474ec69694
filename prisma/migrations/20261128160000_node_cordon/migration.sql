-- An admin may cordon a node (POST /v1/nodes/{id}/cordon), as `kubectl cordon` or Slurm's
-- `state=drain` do: from the next scheduling round nothing new is placed on its devices, while the
-- jobs already there keep running (and counting). A flag of its own, apart from `status`, which the
-- node's daemon drives (registration, heartbeats and its own drain set it): none of them clears a
-- cordon, only POST /v1/nodes/{id}/uncordon does. `cordon_evict` (Kubernetes' drain): every round
-- also gives each job running there a preemption notice (reason `drain`) until none is left.
ALTER TABLE "nodes" ADD COLUMN "cordoned_at" TIMESTAMPTZ(3),
  ADD COLUMN "cordon_reason" TEXT,
  ADD COLUMN "cordon_evict" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_cordon_check"
  CHECK ("cordoned_at" IS NOT NULL OR ("cordon_reason" IS NULL AND NOT "cordon_evict"));
