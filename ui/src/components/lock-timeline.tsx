/**
 * Each device of a pool as a lane, each device-lock hold as a bar in its job's colour, from the
 * window's start to now; a dark tick marks every switch from one job to another on a device. Bars
 * are SVG scaled to the lane's width (labels stay HTML, so they never stretch), which keeps the
 * picture readable from a phone to a wide screen. A lane of a cordoned node says so: it takes
 * nothing new, so its holds end as its jobs leave.
 */
import { Group, Stack, Text, Tooltip } from '@mantine/core';
import type { components } from '../../../sdk/src/index.js';
import { jobColor, time } from '../format.js';
import { cordonBadge } from './cordoned-nodes.js';

type Timeline = components['schemas']['PoolTimeline'];
type Hold = components['schemas']['PoolHold'];

const WIDTH = 1000;
const LANE_HEIGHT = 28;

const label = (h: Hold) => `${h.jobName ?? h.job.slice(0, 8)}${h.tenantName ? ` (${h.tenantName})` : ''}`;

export function LockTimeline({ timeline }: { timeline: Timeline }) {
  const t1 = Date.parse(timeline.now);
  // Zoomed to the holds when they fill only the end of the window (a pool that just got busy); the
  // whole window when it has none (the minimum of no start was Infinity: "Invalid Date" ticks).
  const since = Date.parse(timeline.since);
  const first = timeline.data.reduce((m, h) => Math.min(m, Date.parse(h.start)), t1);
  const t0 = timeline.data.length ? Math.max(since, first - (t1 - first) * 0.05) : since;
  const span = Math.max(t1 - t0, 1);
  const x = (ms: number) => ((Math.min(Math.max(ms, t0), t1) - t0) / span) * WIDTH;
  const jobs = new Map<string, { hold: Hold; holds: number; ms: number }>();
  for (const h of timeline.data) {
    const j = jobs.get(h.job) ?? { hold: h, holds: 0, ms: 0 };
    j.holds++;
    j.ms += (h.end ? Date.parse(h.end) : t1) - Math.max(Date.parse(h.start), t0);
    jobs.set(h.job, j);
  }
  const ticks = Array.from({ length: 5 }, (_, i) => t0 + (span * i) / 4);

  return (
    <Stack gap="xs" data-testid="lock-timeline" data-switches={timeline.switches} data-jobs={jobs.size}>
      {timeline.devices.map((d) => {
        const holds = timeline.data
          .filter((h) => h.node === d.node && h.device === d.index)
          .sort((a, b) => a.start.localeCompare(b.start));
        return (
          <div key={`${d.node}/${d.index}`} data-testid="device-lane" data-holds={holds.length}>
            <Text size="xs" c="dimmed">
              {d.nodeName} · device {d.index} {d.nodeStatus !== 'ready' ? `(${d.nodeStatus})` : ''}{' '}
              {d.nodeCordon && (
                <Text span size="xs" c={cordonBadge(d.nodeCordon).color} data-testid="lane-cordon">
                  {cordonBadge(d.nodeCordon).label} since {time(d.nodeCordon.cordonedAt)}
                </Text>
              )}
            </Text>
            <svg
              viewBox={`0 0 ${WIDTH} ${LANE_HEIGHT}`}
              preserveAspectRatio="none"
              width="100%"
              height={LANE_HEIGHT}
              role="img"
              aria-label={`device ${d.index} of ${d.nodeName}`}
              style={{ display: 'block', background: 'var(--mantine-color-default-hover)', borderRadius: 4 }}
            >
              {holds.map((h, i) => {
                const start = Date.parse(h.start);
                const end = h.end ? Date.parse(h.end) : t1;
                const switched = i > 0 && holds[i - 1]!.job !== h.job;
                return (
                  <g key={`${h.token}`}>
                    <rect
                      x={x(start)}
                      y={3}
                      width={Math.max(x(end) - x(start), 1.5)}
                      height={LANE_HEIGHT - 6}
                      fill={jobColor(h.job)}
                    >
                      <title>{`${label(h)} · ${h.stage} · ${new Date(start).toLocaleTimeString()}–${
                        h.end ? new Date(end).toLocaleTimeString() : 'now'
                      } (${((end - start) / 1000).toFixed(2)} s)`}</title>
                    </rect>
                    {switched && <rect x={x(start) - 0.5} y={0} width={1} height={4} fill="currentColor" />}
                  </g>
                );
              })}
            </svg>
          </div>
        );
      })}
      {timeline.data.length === 0 && (
        <Text size="xs" c="dimmed" data-testid="timeline-idle">
          No device was held in this window.
        </Text>
      )}
      {/* Five times ran into each other on a phone: below Mantine's xs breakpoint only the ends and
          the middle are shown. */}
      <Group justify="space-between" gap="xs" wrap="nowrap">
        {ticks.map((t, i) => (
          <Text
            key={i}
            size="xs"
            c="dimmed"
            visibleFrom={i % 2 ? 'xs' : undefined}
            data-testid="timeline-tick"
          >
            {new Date(t).toLocaleTimeString()}
          </Text>
        ))}
      </Group>
      <Group gap="md">
        {[...jobs.entries()].map(([id, j]) => (
          <Tooltip key={id} label={`${j.holds} holds, ${(j.ms / 1000).toFixed(1)} s on devices`}>
            <Group gap={6} data-testid="timeline-job">
              <span
                style={{
                  width: 12,
                  height: 12,
                  borderRadius: 2,
                  background: jobColor(id),
                  display: 'inline-block',
                }}
              />
              <Text size="sm">{label(j.hold)}</Text>
            </Group>
          </Tooltip>
        ))}
      </Group>
      <Text size="sm" data-testid="timeline-switches">
        {timeline.switches} switches between jobs in this window
      </Text>
    </Stack>
  );
}
