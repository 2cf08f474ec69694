/**
 * The CLI's credentials file: `$XDG_CONFIG_HOME/timeshare/credentials.json` (else
 * `~/.config/timeshare/`), mode 0600 in a 0700 folder because it holds an API key and a token.
 */
import { mkdir, readFile, rename, writeFile, chmod } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

export interface Credentials {
  apiUrl?: string;
  /** Tenant key, kept so that an expired token can be renewed without asking again. */
  apiKey?: string;
  token?: string;
  expiresAt?: string;
  adminKey?: string;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'timeshare');
}

export const credentialsPath = (env: NodeJS.ProcessEnv = process.env) =>
  path.join(configDir(env), 'credentials.json');

export async function readCredentials(): Promise<Credentials> {
  try {
    return JSON.parse(await readFile(credentialsPath(), 'utf8')) as Credentials;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

export async function writeCredentials(creds: Credentials): Promise<void> {
  const file = credentialsPath();
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written aside then renamed, so a crash never leaves a half file; the mode is set at creation
  // (no window where the key is world-readable) and again in case an old file had another one.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}
