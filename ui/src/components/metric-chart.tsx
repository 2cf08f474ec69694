/**
 * One metric's curve over steps, drawn by uPlot into a canvas that follows its container's width.
 * `data-points` on the wrapper says how many points are drawn, `data-y-min` and `data-y-max` on the
 * plot's box its value axis (the browser test reads them).
 */
import { useEffect, useRef } from 'react';
import { Card, Text } from '@mantine/core';
import uPlot from 'uplot';

export interface MetricChartProps {
  title: string;
  steps: number[];
  values: number[];
  color: string;
}

const HEIGHT = 180;

/**
 * uPlot's own range, except for a flat series: all zeros (a KL that stays 0) got a 0–100 axis, and
 * a constant spanned 0 to twice its value. A flat line sits mid-axis, a tenth of its size either
 * side (±1 around zero).
 */
const yRange: uPlot.Range.Function = (_u, min, max) => {
  if (min == null || max == null) return [null, null];
  if (min !== max) return uPlot.rangeNum(min, max, 0.1, true);
  const pad = Math.abs(min) * 0.1 || 1;
  return [min - pad, max + pad];
};

export function MetricChart({ title, steps, values, color }: MetricChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const u = new uPlot(
      {
        width: Math.max(el.clientWidth, 200),
        height: HEIGHT,
        legend: { show: false },
        scales: { x: { time: false }, y: { range: yRange } },
        axes: [{ label: 'step', size: 36 }, { size: 48 }],
        series: [{ label: 'step' }, { label: title, stroke: color, width: 2, points: { show: false } }],
        hooks: {
          // The axis is drawn on the canvas: its range is kept on the box for the browser test.
          setScale: [
            (p, key) => {
              if (key !== 'y') return;
              el.dataset.yMin = String(p.scales.y?.min);
              el.dataset.yMax = String(p.scales.y?.max);
            },
          ],
        },
      },
      [[], []],
      el,
    );
    plot.current = u;
    const resize = new ResizeObserver(() =>
      u.setSize({ width: Math.max(el.clientWidth, 200), height: HEIGHT }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [title, color]);

  useEffect(() => {
    plot.current?.setData([steps, values]);
  }, [steps, values]);

  const last = values[values.length - 1];
  return (
    <Card withBorder padding="sm" data-testid={`chart-${title}`} data-points={values.length}>
      <Text size="sm" fw={600}>
        {title}{' '}
        <Text span size="sm" c="dimmed">
          {last === undefined ? 'no points yet' : `${last.toFixed(4)} at step ${steps[steps.length - 1]}`}
        </Text>
      </Text>
      <div ref={box} style={{ width: '100%', minHeight: HEIGHT }} />
    </Card>
  );
}
