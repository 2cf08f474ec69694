-- One home for the usage period: a tenant's device-hours quota counts from the start of the current
-- calendar month in UTC. Admission (admit_jobs, api/jobs/admit.ts), the usage route and the usage
-- recording of node reports all call this function instead of each spelling the rule out; the
-- explicit 'UTC' keeps the period independent of the session's TimeZone setting.
CREATE FUNCTION usage_period_start() RETURNS timestamptz
LANGUAGE sql STABLE AS $$ SELECT date_trunc('month', now(), 'UTC') $$;

ALTER TABLE "quotas" ALTER COLUMN "period_start" SET DEFAULT usage_period_start();

-- admit_jobs spelled the rule inline. Rewrite whatever body it has now (other migrations may have
-- redefined it since) so that it calls the function, and refuse to go on if nothing was replaced.
DO $do$
DECLARE
  def text := pg_get_functiondef('admit_jobs(jsonb)'::regprocedure);
  fixed text := replace(def, 'date_trunc(''month'', now())', 'usage_period_start()');
BEGIN
  IF fixed = def THEN
    RAISE EXCEPTION 'admit_jobs does not compute the usage period as expected';
  END IF;
  EXECUTE fixed;
END
$do$;
