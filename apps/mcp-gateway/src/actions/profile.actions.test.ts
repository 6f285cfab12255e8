import { BusClient } from '@dagu-mcp/bus';
import { DaguError, type Principal, type Role } from '@dagu-mcp/contracts';
import { deleteProfile, getProfile, listProfiles, putProfile, setDefaultProfile } from './profile.actions';

/** A bus that is never to be reached: it records the op and refuses (no Redis). */
class UnreachableBus extends BusClient {
  readonly ops: string[] = [];
  constructor() {
    super({ redisUrl: 'redis://unused' });
  }
  override async call(_service: string, _catalog: unknown, op: string): Promise<never> {
    this.ops.push(op);
    throw new DaguError('resource_unavailable', 'the bus is not there in this test');
  }
}

const as = (role: Role): Principal => ({ id: `user:${role}`, subject: role, role, credentialType: 'api_key' });
const profileRef = { workspace: 'team', profile: 'prod' };

describe('profile actions: the role is checked before the bus (022b "Runtime profiles")', () => {
  it('refuses a viewer the reads (operator) and an operator the writes (manager)', async () => {
    const bus = new UnreachableBus();
    const attempts = [
      listProfiles(bus, as('viewer'), { workspace: 'team' }),
      getProfile(bus, as('viewer'), profileRef),
      putProfile(bus, as('operator'), { ...profileRef, env: {} }),
      deleteProfile(bus, as('developer'), profileRef),
      setDefaultProfile(bus, as('developer'), { workspace: 'team', profile: null }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
    await expect(getProfile(bus, as('operator'), profileRef)).rejects.toMatchObject({ code: 'resource_unavailable' });
    expect(bus.ops).toEqual(['profile.get']);
  });
});
