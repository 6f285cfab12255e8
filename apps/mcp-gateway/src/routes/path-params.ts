import { DaguError } from '@dagu-mcp/contracts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A route parameter that must be a UUID (user and API-key ids). Checked at the
 * edge, so a malformed id is the client's fault, never a database error
 *.
 *
 * @throws DaguError `invalid_request` on `field` when `value` is not a UUID
 */
export function uuidParam(value: unknown, field: string): string {
  if (typeof value === 'string' && UUID.test(value)) return value.toLowerCase();
  throw new DaguError('invalid_request', `${field}: must be a UUID`, { field });
}
