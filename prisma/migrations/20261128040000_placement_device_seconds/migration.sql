-- A report's charge is capped at its placement's wall time × devices held, less what the placement
-- was charged already. That amount was summed from usage_ledger on every report, a scan of the whole
-- ledger (no index on job_id): 253 ms a report at 1,000,000 rows, 907 ms at 3,000,000. The job's row
-- now keeps it, reset at each placement (scheduler/rounds/apply-decisions.ts).
ALTER TABLE "jobs" ADD COLUMN "placement_device_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;

UPDATE "jobs" AS j SET "placement_device_seconds" = s.total
  FROM (SELECT u.job_id, sum(u.device_seconds) AS total
          FROM "usage_ledger" u JOIN "jobs" k ON k.id = u.job_id
         WHERE u.created_at >= coalesce(k.placed_at, k.started_at)
         GROUP BY u.job_id) AS s
 WHERE j.id = s.job_id;
