// Loads the Lua scripts as one Redis FUNCTION library (Redis >= 7) and calls them with FCALL.
// A script's file name carries its key count; `lua/includes/lock-core.lua` is pasted once at
// the library's top, so its helper closures are built once at load, not on every call as the
// top of an EVAL script would (measured: ~5-9 µs of a ~90 µs release + grant on this VM).
//
// The library and function names carry a hash of the code, so processes running different
// versions of the lock share one Redis without replacing each other's code. A Redis that lost
// its functions (restart, FUNCTION FLUSH) answers "Function not found": the library is loaded
// again and the call retried once.
//
// Each upgrade would leave its predecessor's library behind for good, so every load stamps its
// library in a registry hash and deletes the libraries nobody has loaded for a day. A process
// still running such a version loses nothing: its next call finds its functions missing, loads
// them again (stamping them anew) and retries. Two live versions cannot keep deleting each other:
// only a library a day past its last load goes.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

export const scriptNames = [
  'acquire-4',
  'release-3',
  'renew-3',
  'cancel-waiter-3',
  'touch-waiter-3',
  'expire-lapsed-3',
  'set-priority-3',
  'abandon-holder-3',
] as const;
export type ScriptName = (typeof scriptNames)[number];

/** Every script replies `[code, payload]`: code >= 0 is success, < 0 maps through errorFromScript. */
export type ScriptReply = [number, string];

const here = path.dirname(fileURLToPath(import.meta.url));

// `tsc` does not copy .lua files: when running from dist/, read them from the source tree.
function luaDir(): string {
  const candidates = [path.join(here, 'lua'), path.resolve(here, '../../../common/device-lock/lua')];
  const found = candidates.find((dir) => existsSync(path.join(dir, 'acquire-4.lua')));
  if (!found) throw new Error(`device-lock Lua scripts not found in ${candidates.join(' or ')}`);
  return found;
}

const includeLine = /^--- @include "lock-core"$/m;

interface Library {
  name: string;
  code: string;
  functionOf: Map<ScriptName, string>;
}

let cache: Library | undefined;

function library(): Library {
  if (cache) return cache;
  const dir = luaDir();
  const core = readFileSync(path.join(dir, 'includes', 'lock-core.lua'), 'utf8');
  const bodies = scriptNames.map((name) => {
    const text = readFileSync(path.join(dir, `${name}.lua`), 'utf8');
    if (!includeLine.test(text)) throw new Error(`${name}.lua does not include lock-core`);
    return [name, text.replace(includeLine, '')] as const;
  });
  const hash = createHash('sha1')
    .update(core)
    .update(bodies.map(([n, b]) => `${n}\n${b}`).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const functionOf = new Map<ScriptName, string>();
  const name = `ts_device_lock_${hash}`;
  const parts = [`#!lua name=${name}`, core];
  for (const [script, body] of bodies) {
    const fn = `${name}_${script.replace(/-/g, '_')}`;
    functionOf.set(script, fn);
    // KEYS and ARGV as parameter names keep the script files readable as scripts.
    parts.push(`redis.register_function('${fn}', function(KEYS, ARGV)\nbegin(KEYS, ARGV)\n${body}\nend)`);
  }
  cache = { name, code: parts.join('\n'), functionOf };
  return cache;
}

/** FUNCTIONs live outside every key prefix, so their registry does too. */
export const libraryRegistryKey = 'ts_device_lock:libraries';
export const libraryIdleMs = 24 * 3600 * 1000;
const libraryPattern = 'ts_device_lock_*';

export const currentLibraryName = (): string => library().name;

/** Library names from FUNCTION LIST, whose RESP2 reply is one flat [key, value, ...] list each. */
function libraryNames(reply: unknown): string[] {
  return (reply as unknown[][]).map((entry) => String(entry[entry.indexOf('library_name') + 1]));
}

/** Deletes the device-lock libraries no process has loaded for `libraryIdleMs` (best effort). */
async function pruneIdleLibraries(redis: Redis, current: string, now: number): Promise<void> {
  const [listed, stamps] = await Promise.all([
    redis.function('LIST', 'LIBRARYNAME', libraryPattern).then(libraryNames),
    redis.hgetall(libraryRegistryKey),
  ]);
  for (const name of listed) {
    if (name === current) continue;
    const stamp = stamps[name];
    // Loaded by code older than the registry: its day of grace starts now.
    if (stamp === undefined) await redis.hsetnx(libraryRegistryKey, name, now);
    else if (now - Number(stamp) > libraryIdleMs) {
      await redis.function('DELETE', name).catch(() => {}); // another process may have been first
      await redis.hdel(libraryRegistryKey, name);
    }
  }
  const gone = Object.keys(stamps).filter((n) => !listed.includes(n) && n !== current);
  if (gone.length) await redis.hdel(libraryRegistryKey, ...gone);
}

/** Loads this version's library, stamps it and prunes idle ones; resolves once all is done. */
export async function loadLibrary(redis: Redis, now = Date.now()): Promise<void> {
  await redis.function('LOAD', 'REPLACE', library().code);
  const current = currentLibraryName();
  await redis.hset(libraryRegistryKey, current, now);
  // Housekeeping must never fail a load: a library left over is only memory.
  await pruneIdleLibraries(redis, current, now).catch(() => {});
}

const loaded = new WeakMap<Redis, Promise<void>>();

function load(redis: Redis): Promise<void> {
  const p = loadLibrary(redis);
  loaded.set(redis, p);
  p.catch(() => loaded.delete(redis));
  return p;
}

/** Loads the library through this client once (idempotent per client). */
export function defineScripts(redis: Redis): void {
  if (!loaded.has(redis)) load(redis).catch(() => {}); // a failure surfaces at the first call
}

const notLoaded = (err: unknown) => err instanceof Error && /Function not found/i.test(err.message);

export async function runScript(
  redis: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptReply> {
  const fn = library().functionOf.get(name);
  if (!fn) throw new Error(`unknown device-lock script ${name}`);
  let reply: unknown;
  try {
    reply = await redis.fcall(fn, keys.length, ...keys, ...args);
  } catch (err) {
    if (!notLoaded(err)) throw err;
    await load(redis);
    reply = await redis.fcall(fn, keys.length, ...keys, ...args);
  }
  const [code, payload] = reply as [number, string | number];
  return [Number(code), String(payload)];
}
