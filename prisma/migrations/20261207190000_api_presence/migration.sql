-- Each API process says it is up and reaching the database (common/api-presence.ts): it upserts its row
-- every `period_ms` with the database's now(). `present_since` is the start of its unbroken run of
-- such writes (a write after more than 3 periods without one starts a new run). The liveness sweep
-- (scheduler/liveness.ts) counts a node's silence only while some API instance was present: with
-- the API down and PostgreSQL up, heartbeats fail but the sweep's statements do not.
CREATE TABLE "api_presence" (
    "instance_id" TEXT NOT NULL,
    "present_since" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "period_ms" INTEGER NOT NULL,

    CONSTRAINT "api_presence_pkey" PRIMARY KEY ("instance_id")
);
