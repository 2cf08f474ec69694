/** Standard Webhooks signing (https://www.standardwebhooks.com) through its reference library. */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint secret in the scheme's `whsec_<base64>` form (24 random bytes). */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The three headers of one attempt; `id` is the same on every retry so receivers can deduplicate. */
export function signedHeaders(
  secret: string,
  id: string,
  body: string,
  at = new Date(),
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}
