// Loads the Lua scripts once per ioredis client with `defineCommand` (EVALSHA, falling back to
// EVAL when the server's script cache is empty). A script's file name carries its key count.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

export const scriptNames = [
  'acquire-5',
  'release-4',
  'renew-4',
  'cancel-waiter-4',
  'touch-waiter-4',
  'expire-lapsed-4',
  'set-priority-4',
] as const;
export type ScriptName = (typeof scriptNames)[number];

/** Every script replies `[code, payload]`: code >= 0 is success, < 0 maps through errorFromScript. */
export type ScriptReply = [number, string];
type ScriptFn = (...keysThenArgs: (string | number)[]) => Promise<[number, string | number]>;

const here = path.dirname(fileURLToPath(import.meta.url));

// `tsc` does not copy .lua files: when running from dist/, read them from the source tree.
function luaDir(): string {
  const candidates = [path.join(here, 'lua'), path.resolve(here, '../../../scheduler/device-lock/lua')];
  const found = candidates.find((dir) => existsSync(path.join(dir, 'acquire-5.lua')));
  if (!found) throw new Error(`device-lock Lua scripts not found in ${candidates.join(' or ')}`);
  return found;
}

const includeLine = /^--- @include "([\w-]+)"$/m;

function loadScript(dir: string, name: string): string {
  let text = readFileSync(path.join(dir, `${name}.lua`), 'utf8');
  for (let m = includeLine.exec(text); m; m = includeLine.exec(text)) {
    const inc = readFileSync(path.join(dir, 'includes', `${m[1]}.lua`), 'utf8');
    text = text.replace(m[0], () => inc);
  }
  return text;
}

let cache: Map<ScriptName, string> | undefined;

function sources(): Map<ScriptName, string> {
  if (!cache) {
    const dir = luaDir();
    cache = new Map(scriptNames.map((n) => [n, loadScript(dir, n)]));
  }
  return cache;
}

const commandName = (name: ScriptName): string => `tsDeviceLock_${name.replace(/-/g, '_')}`;

/** Defines every script on the client (idempotent per client). */
export function defineScripts(redis: Redis): void {
  const defined = redis as unknown as Record<string, unknown>;
  for (const [name, lua] of sources()) {
    if (typeof defined[commandName(name)] === 'function') continue;
    const numberOfKeys = Number(name.slice(name.lastIndexOf('-') + 1));
    redis.defineCommand(commandName(name), { numberOfKeys, lua });
  }
}

export async function runScript(
  redis: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptReply> {
  const fn = (redis as unknown as Record<string, ScriptFn>)[commandName(name)];
  if (!fn) throw new Error(`device-lock script ${name} is not defined on this client`);
  const [code, payload] = await fn.call(redis, ...keys, ...args);
  return [Number(code), String(payload)];
}
