/**
 * Every metric point of a job that a query selects, read page after page: one page holds at most
 * 10,000 points, fewer than a long job writes (~12 a step).
 */
import { unwrap, type MetricPoint, type TimeshareClient, type operations } from './client.js';

export type MetricsQuery = Omit<NonNullable<operations['listJobMetrics']['parameters']['query']>, 'after'>;

export async function allJobMetrics(
  client: TimeshareClient,
  jobId: string,
  query: MetricsQuery = {},
): Promise<MetricPoint[]> {
  const points: MetricPoint[] = [];
  let after: string | undefined;
  do {
    const page = await unwrap(
      client.GET('/v1/jobs/{id}/metrics', {
        params: { path: { id: jobId }, query: { limit: 10_000, ...query, after } },
      }),
    );
    points.push(...page.data);
    after = page.nextCursor ?? undefined;
  } while (after !== undefined);
  return points;
}
