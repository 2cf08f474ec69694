import { Badge } from '@mantine/core';
import { statusColor } from '../format.js';

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge
      color={statusColor[status] ?? 'gray'}
      variant="light"
      data-testid="job-status"
      data-status={status}
    >
      {status}
    </Badge>
  );
}
