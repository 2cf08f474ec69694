-- AlterTable
ALTER TABLE "nodes" ADD COLUMN     "host_memory_bytes" BIGINT;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "requeue_reason" TEXT;
-- Leader fencing, enforced by the database rather than by the leader's goodwill: a scheduling
-- decision on a job (placing it, sending it a preemption notice, or taking it back) carries the
-- epoch of the leader that made it, and is refused unless that epoch is the current, unexpired
-- lease's. The lease row is read FOR SHARE, so a takeover (an UPDATE of that row) waits for a
-- decision in flight to commit or roll back, and a decision that starts after it sees the new
-- epoch: a deposed leader can never write a decision once its successor holds the lease.
CREATE FUNCTION scheduler_fence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  current_epoch bigint;
BEGIN
  IF NEW.sched_epoch IS DISTINCT FROM OLD.sched_epoch
     OR (OLD.status = 'queued' AND NEW.status = 'placed')
     OR (NEW.preempt_requested_at IS NOT NULL AND OLD.preempt_requested_at IS NULL) THEN
    SELECT l.epoch INTO current_epoch FROM scheduler_leases l
     WHERE l.name = 'scheduler' AND l.expires_at > clock_timestamp()
       FOR SHARE;
    IF current_epoch IS NULL OR NEW.sched_epoch IS DISTINCT FROM current_epoch THEN
      RAISE EXCEPTION 'scheduling decision under epoch % refused: the current leader epoch is %',
        NEW.sched_epoch, current_epoch
        USING ERRCODE = 'TSF01';
    END IF;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER jobs_scheduler_fence BEFORE UPDATE ON "jobs"
  FOR EACH ROW EXECUTE FUNCTION scheduler_fence();
