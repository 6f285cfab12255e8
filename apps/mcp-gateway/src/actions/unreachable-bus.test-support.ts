import { BusClient } from '@dagu-mcp/bus';
import { DaguError, type Principal, type Role } from '@dagu-mcp/contracts';

/**
 * A bus that is never to be reached (no Redis): it records each op it is asked
 * for and refuses it, by default with `resource_unavailable`, or with what
 * `refusal` answers for the op. The actions' tests use it to show that a role
 * is checked before any bus call, and to drive a rule through a service's refusal.
 */
export class UnreachableBus extends BusClient {
  readonly ops: string[] = [];
  constructor(
    private readonly refusal: (op: string) => DaguError = () => new DaguError('resource_unavailable', 'no bus'),
  ) {
    super({ redisUrl: 'redis://unused' });
  }
  override async call(_service: string, _catalog: unknown, op: string): Promise<never> {
    this.ops.push(op);
    throw this.refusal(op);
  }
}

/** A person with `role` signed in with an API key. */
export const as = (role: Role): Principal => ({
  id: `user:${role}`,
  subject: role,
  role,
  credentialType: 'api_key',
});
