import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of `op` and `payload` in canonical JSON (object keys sorted,
 * at every depth), so the same request hashes the same whatever the key
 * order: how an idempotency key tells "the same payload" from another
 *.
 */
export function payloadHashOf(op: string, payload: unknown): string {
  return createHash('sha256').update(op).update('\0').update(canonicalJson(payload)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
