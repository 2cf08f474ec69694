/**
 * The job event types a webhook endpoint may subscribe to, and all that an endpoint with no
 * `events` gets: one list for the API's schema (api/routes/webhooks.ts) and the fan-out, so that
 * nothing reaches a receiver that it could not have asked for by name. Other job_events types
 * (`job.plan_fitted`, `job.preempting`, `job.rebalanced`, …) are records for people and dashboards
 * whose data may change shape; sending them would make their shape a contract.
 */
export const webhookEventTypes = [
  'job.queued',
  'job.admitted',
  'job.placed',
  'job.running',
  'job.preempted',
  'job.checkpoint',
  'job.succeeded',
  'job.failed',
  'job.cancelled',
  'job.paused',
  'job.resumed',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];
