import { createAgent, deleteAgent, getAgent, listAgents, setAgentTools, updateAgent } from './agent.actions';
import { as, UnreachableBus } from './unreachable-bus.test-support';

const ref = { workspace: 'ops', slug: 'helper' };

describe('agent actions: the role is checked before the bus (dagu-model §9)', () => {
  it('refuses a developer every agent op with unauthorized, no bus call and no announcement', async () => {
    const bus = new UnreachableBus();
    const announced: string[] = [];
    const announcing = { announce: async (ws: string, slug: string) => void announced.push(`${ws}/${slug}`) };
    const developer = as('developer');
    const attempts = [
      listAgents(bus, developer, { workspace: 'ops' }),
      getAgent(bus, developer, ref),
      createAgent(bus, developer, { ...ref, title: 'Helper' }, announcing),
      updateAgent(bus, developer, { ...ref, title: 'Helper 2' }, announcing),
      deleteAgent(bus, developer, ref, announcing),
      setAgentTools(bus, developer, { ...ref, tools: [] }, announcing),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
    expect(announced).toEqual([]);
  });

  it('lets a manager through to the bus, and announces nothing when the change fails', async () => {
    const bus = new UnreachableBus();
    const announced: string[] = [];
    const announcing = { announce: async (ws: string, slug: string) => void announced.push(`${ws}/${slug}`) };
    await expect(getAgent(bus, as('manager'), ref)).rejects.toMatchObject({ code: 'resource_unavailable' });
    await expect(setAgentTools(bus, as('admin'), { ...ref, tools: [] }, announcing)).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    expect(bus.ops).toEqual(['agent.get', 'agent.setTools']);
    expect(announced).toEqual([]);
  });
});
