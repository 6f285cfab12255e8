import { deleteProfile, getProfile, listProfiles, putProfile, setDefaultProfile } from './profile.actions';
import { as, UnreachableBus } from './unreachable-bus.test-support';

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
