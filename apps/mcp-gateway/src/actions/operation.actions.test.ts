import { SYSTEM_PRINCIPAL } from '@dagu-mcp/contracts';
import {
  callOperation,
  createOperation,
  deleteOperation,
  deleteUpstream,
  getOperation,
  getOperationTool,
  getUpstream,
  importOperations,
  listOperations,
  listUpstreams,
  newOperationVersion,
  publishOperation,
  putUpstream,
  updateOperation,
} from './operation.actions';
import { as, UnreachableBus } from './unreachable-bus.test-support';

const ws = { workspace: 'ops' };
const op = { workspace: 'ops', name: 'get_invoice' };
const spec = {};

describe('operation actions: the role is checked before the bus (dagu-model §9)', () => {
  it('refuses a developer every upstream and operation op managers use, with no bus call', async () => {
    const bus = new UnreachableBus();
    const announced: string[] = [];
    const announcing = { announce: async (w: string, slug: string) => void announced.push(`${w}/${slug}`) };
    const developer = as('developer');
    const attempts = [
      listUpstreams(bus, developer, ws),
      getUpstream(bus, developer, { workspace: 'ops', name: 'billing' }),
      putUpstream(bus, developer, { workspace: 'ops', name: 'billing', baseUrl: 'https://billing.example' }),
      deleteUpstream(bus, developer, { workspace: 'ops', name: 'billing' }),
      listOperations(bus, developer, ws),
      getOperation(bus, developer, op),
      createOperation(bus, developer, { ...op, title: 'Invoice', spec }),
      updateOperation(bus, developer, { ...op, title: 'Invoice' }, announcing),
      deleteOperation(bus, developer, op, announcing),
      newOperationVersion(bus, developer, op),
      publishOperation(bus, developer, { ...op, version: 1 }, announcing),
      importOperations(bus, developer, { workspace: 'ops', upstream: 'billing', document: {} }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
    expect(announced).toEqual([]);
  });

  it("serves a REST tool's definition to the gateway's system principal (a viewer)", async () => {
    const bus = new UnreachableBus();
    await expect(getOperationTool(bus, SYSTEM_PRINCIPAL, { ...op, version: 'latest' })).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    expect(bus.ops).toEqual(['operation.tool']);
  });

  it('calls a REST tool for an operator, never for a viewer', async () => {
    const bus = new UnreachableBus();
    const call = { ...op, version: 'latest' as const, arguments: { id: 7 } };
    await expect(callOperation(bus, as('viewer'), call)).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
    await expect(callOperation(bus, as('operator'), call, { timeoutMs: 1000 })).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    expect(bus.ops).toEqual(['operation.call']);
  });
});
