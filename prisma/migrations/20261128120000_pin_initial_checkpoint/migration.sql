-- A job submitted to start from a checkpoint holds that checkpoint's row while it is inserted
-- (FOR KEY SHARE, to the end of the admission's transaction), and is refused if the row is gone.
-- Retention (common/jobs/checkpoint-retention.ts) locks the rows it means to retire FOR UPDATE, then
-- looks for jobs naming them in a statement of its own: an admission that locked first has
-- committed by then and is seen (the checkpoint is kept), one that waits on retention finds the row
-- deleted and is refused with SQLSTATE TSCK0 (the API answers "no such checkpoint"). Before this,
-- both read at once could each miss the other: the job was admitted and its checkpoint deleted.
CREATE FUNCTION jobs_pin_initial_checkpoint() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM checkpoints
   WHERE id = (NEW.spec #>> '{initialCheckpoint,checkpointId}')::uuid
     AND job_id = (NEW.spec #>> '{initialCheckpoint,jobId}')::uuid
     FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'checkpoint % of job % is gone',
      NEW.spec #>> '{initialCheckpoint,checkpointId}', NEW.spec #>> '{initialCheckpoint,jobId}'
      USING ERRCODE = 'TSCK0';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER jobs_pin_initial_checkpoint
  BEFORE INSERT ON jobs
  FOR EACH ROW WHEN (NEW.spec ? 'initialCheckpoint')
  EXECUTE FUNCTION jobs_pin_initial_checkpoint();
