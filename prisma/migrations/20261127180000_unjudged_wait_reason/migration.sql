-- A job no scheduling round has judged yet has no wait reason. Admission stored 'capacity', a
-- claim nobody had made: the API served it, with no queue position, until the first round. Rounds
-- run at once on a submission and at least every second, and each stores the reason it finds
-- where it differs from the stored one (scheduler/rounds/round-loop.ts), so a fresh job gets its
-- reason from the first round after it was submitted.
-- Rewrite whatever body admit_jobs has now (other migrations may have redefined it since), and
-- refuse to go on if nothing was replaced.
DO $do$
DECLARE
  def text := pg_get_functiondef('admit_jobs(jsonb)'::regprocedure);
  fixed text := replace(def, 'a.max_attempts, ''capacity''', 'a.max_attempts, NULL');
BEGIN
  IF fixed = def THEN
    RAISE EXCEPTION 'admit_jobs does not store the wait reason ''capacity'' as expected';
  END IF;
  EXECUTE fixed;
END
$do$;
