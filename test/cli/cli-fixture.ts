/**
 * What a CLI test file runs against: a real API (and a tenant, when named), and a config home of
 * its own where the CLI keeps credentials, made before the file's tests and removed after them.
 */
import { after, before } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

export interface CliFixture {
  h: Harness;
  /** The tenant named in the options (unset without one). */
  t: TestTenant;
  home: string;
  /** `XDG_CONFIG_HOME`, and what `env` adds (the API's URL, keys). */
  env: Record<string, string>;
}

export function useCliFixture(
  name: string,
  o: { tenant?: string; env?: (f: Pick<CliFixture, 'h' | 't'>) => Record<string, string> } = {},
): CliFixture {
  const f = {} as CliFixture;
  before(async () => {
    f.h = await startHarness();
    if (o.tenant) f.t = await f.h.createTenant(o.tenant);
    f.home = await mkdtemp(path.join(tmpdir(), `timeshare-cli-${name}-`));
    f.env = { XDG_CONFIG_HOME: path.join(f.home, 'config'), ...o.env?.(f) };
  });
  after(async () => {
    await f.h?.close();
    if (f.home) await rm(f.home, { recursive: true, force: true });
  });
  return f;
}
