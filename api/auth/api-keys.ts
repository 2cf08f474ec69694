/**
 * API keys: 32 random bytes, shown to the user once. Only the sha256 is stored: the keys carry
 * 256 bits of entropy, so a fast hash is safe (no dictionary to attack) and lookups stay O(1).
 * The first characters (`prefix`) are stored in clear so users can tell their keys apart.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyRole = 'tenant' | 'node';

const rolePrefix: Record<KeyRole, string> = { tenant: 'tsk_', node: 'tsn_' };

export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(role: KeyRole): NewApiKey {
  const key = rolePrefix[role] + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: hashSecret(key) };
}

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Constant-time check of a presented secret against a configured one (compared as sha256 digests). */
export function secretMatcher(expected: string): (presented: string) => boolean {
  const want = createHash('sha256').update(expected).digest();
  return (presented) => timingSafeEqual(createHash('sha256').update(presented).digest(), want);
}
