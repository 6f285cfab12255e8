import { unknownOpError } from '@dagu-mcp/bus';
import { DaguError, type DagListReply } from '@dagu-mcp/contracts';
import {
  checkDeleteDag,
  checkRenameDag,
  deleteDag,
  deleteIdleDag,
  renameDag,
  setDagSuspended,
  upsertDag,
  validateDag,
} from './dag.actions';
import { listDagsIfChanged, workspaceOfLabels, type DagPageCache } from './dag-reads.actions';
import { assignDagProfile, checkDagProfile } from './profile.actions';
import { as, UnreachableBus } from './unreachable-bus.test-support';

const dag = { name: 'nightly' };
const page: DagListReply = { items: [], pagination: { page: 1, perPage: 50, total: 0, totalPages: 0 } };

describe('DAG changes: the role is checked before the bus (dagu-model §9, 022b)', () => {
  it('refuses a viewer every DAG change, and the active-run check is not even asked', async () => {
    const bus = new UnreachableBus();
    const viewer = as('viewer');
    const attempts = [
      upsertDag(bus, viewer, { ...dag, spec: 'steps: []' }),
      setDagSuspended(bus, viewer, { ...dag, suspended: true }),
      deleteDag(bus, viewer, dag),
      deleteIdleDag(bus, viewer, dag),
      renameDag(bus, viewer, { ...dag, newName: 'daily' }),
      assignDagProfile(bus, viewer, { dagName: 'nightly', profile: 'prod' }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
  });

  it('lets a viewer preview every change: previews never fail on role (022b)', async () => {
    const bus = new UnreachableBus();
    const viewer = as('viewer');
    const previews = [
      validateDag(bus, viewer, { ...dag, spec: 'steps: []' }),
      checkRenameDag(bus, viewer, { ...dag, newName: 'daily' }),
      checkDeleteDag(bus, viewer, dag),
      checkDagProfile(bus, viewer, { dagName: 'nightly', profile: 'prod' }),
    ];
    for (const preview of previews) await expect(preview).rejects.toMatchObject({ code: 'resource_unavailable' });
    // The previews run at once; the validate waits a tick for the edge's pre-scan, so the order is not fixed.
    expect([...bus.ops].sort()).toEqual(['dag.get', 'dag.get', 'dag.get', 'dag.validate']);
  });

  it('asks run-service for an active run before a 022b rename or delete, and not before a REST delete', async () => {
    const bus = new UnreachableBus();
    const developer = as('developer');
    await expect(renameDag(bus, developer, { ...dag, newName: 'daily' })).rejects.toThrow('no bus');
    await expect(deleteIdleDag(bus, developer, dag)).rejects.toThrow('no bus');
    await expect(deleteDag(bus, developer, dag)).rejects.toThrow('no bus');
    expect(bus.ops).toEqual(['run.list', 'run.list', 'dag.delete']);
  });
});

describe('DAG reads', () => {
  const passThrough: DagPageCache = {
    read: async (query, fetch) => (await fetch(query, undefined)).page ?? page,
  };

  it('a dags page is one dag.listIfChanged call', async () => {
    const bus = new UnreachableBus();
    await expect(listDagsIfChanged(bus, as('viewer'), {}, passThrough)).rejects.toThrow('no bus');
    expect(bus.ops).toEqual(['dag.listIfChanged']);
  });

  it('falls back to dag.list when dag-service does not know dag.listIfChanged (a rolling upgrade)', async () => {
    const bus = new UnreachableBus((op) =>
      op === 'dag.listIfChanged' ? unknownOpError(op) : new DaguError('resource_unavailable', 'no bus'),
    );
    await expect(listDagsIfChanged(bus, as('viewer'), {}, passThrough)).rejects.toThrow('no bus');
    expect(bus.ops).toEqual(['dag.listIfChanged', 'dag.list']);
  });

  it("a DAG's workspace is its first non-empty workspace= label, else default (022b)", () => {
    expect(workspaceOfLabels([])).toBe('default');
    expect(workspaceOfLabels(['team=a', 'workspace= ', 'workspace=ops', 'workspace=b'])).toBe('ops');
  });
});
