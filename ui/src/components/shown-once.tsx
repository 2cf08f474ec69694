/**
 * A secret the API shows only in the answer that created it (an API key, a node key, a webhook's
 * signing secret): the value, a copy button, and plainly that it will not be shown again. It stays
 * until the user says it is kept, and is then gone from the page.
 */
import { Alert, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';

export function ShownOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <Alert color="yellow" title={`${label}: copy it now`} data-testid="shown-once">
      <Stack gap="xs">
        <Text size="sm" fw={600}>
          This is the only time it is shown: it cannot be shown again. Lost, it can only be replaced.
        </Text>
        <Code block data-testid="shown-once-value" style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
          {value}
        </Code>
        <Group>
          <CopyButton value={value}>
            {({ copied, copy }) => (
              <Button
                size="xs"
                color={copied ? 'teal' : 'blue'}
                onClick={copy}
                aria-label={copied ? `Copied the ${label}` : `Copy the ${label}`}
              >
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={onDone}>
            I have kept it
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
