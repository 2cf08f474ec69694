-- Why a succeeded job ended where it did (common/node-protocol/reports.ts `finishReasons`): all its
-- steps, or a target its spec set met first. Shown on the job, so that "succeeded at step 10 of
-- 300" explains itself; null for a job that did not succeed or whose node was too old to say.
ALTER TABLE "jobs" ADD COLUMN "finish_reason" TEXT;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_finish_reason_check"
  CHECK ("finish_reason" IN ('steps_completed', 'target_reward', 'target_accuracy'));
