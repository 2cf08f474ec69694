-- A tenant may pause a job (POST /v1/jobs/{id}/pause) and resume it later: while `paused_at` is set
-- no scheduling round places it, and a round gives a running one a preemption notice (reason
-- `pause`): it checkpoints, leaves its devices and waits in the queue until resumed.
ALTER TABLE "jobs" ADD COLUMN "paused_at" TIMESTAMPTZ(3);
