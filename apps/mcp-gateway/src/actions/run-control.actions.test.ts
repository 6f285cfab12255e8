import { BusClient } from '@dagu-mcp/bus';
import { DaguError, type Principal, type Role } from '@dagu-mcp/contracts';
import { completeHumanTask, decideApproval } from './checkpoint.actions';
import {
  performRunControl,
  requireRunControlRole,
  retryRun,
  runUris,
  startRun,
  stopRun,
  type RunControlRequest,
} from './run-control.actions';
import { readWorkbook } from './workbook.actions';

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
const run = { dagName: 'nightly', dagRunId: 'r1' };
const step = { ...run, stepName: 'review' };

describe('run control: the role is checked before the bus (dagu-model §9)', () => {
  it('refuses a viewer every run control and checkpoint with unauthorized, and no bus call', async () => {
    const bus = new UnreachableBus();
    const viewer = as('viewer');
    const attempts = [
      startRun(bus, viewer, { dagName: 'nightly' }),
      startRun(bus, viewer, { dagName: 'nightly', enqueue: true }),
      retryRun(bus, viewer, run),
      stopRun(bus, viewer, run),
      completeHumanTask(bus, viewer, { ...step, values: {} }),
      decideApproval(bus, viewer, { ...step, decision: 'approve' }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
  });

  it('lets an operator start a stored DAG but not an inline spec, which is authoring (developer)', async () => {
    const bus = new UnreachableBus();
    const operator = as('operator');
    const inline: RunControlRequest = { action: 'start', dagName: 'adhoc', spec: 'steps:\n  - run: echo hi\n' };
    expect(() => requireRunControlRole(operator, inline)).toThrow(DaguError);
    await expect(performRunControl(bus, operator, inline)).rejects.toMatchObject({ code: 'unauthorized' });
    expect(bus.ops).toEqual([]);
    await expect(performRunControl(bus, operator, { action: 'enqueue', dagName: 'nightly' })).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    await expect(performRunControl(bus, as('developer'), inline)).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    await expect(performRunControl(bus, operator, { action: 'stop', ...run })).rejects.toMatchObject({
      code: 'resource_unavailable',
    });
    expect(bus.ops).toEqual(['run.start', 'run.start', 'run.stop']);
  });

  it('checks the workbook role before the extension, so a viewer learns nothing about paths', async () => {
    const bus = new UnreachableBus();
    await expect(readWorkbook(bus, as('viewer'), { path: 'notes.txt' })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    await expect(readWorkbook(bus, as('developer'), { path: 'notes.txt' })).rejects.toMatchObject({
      code: 'invalid_tool_input',
      field: 'path',
    });
    expect(bus.ops).toEqual([]);
  });
});

describe('runUris', () => {
  it('follows the 020 escaping', () => {
    expect(runUris({ dagName: 'a.b', dagRunId: 'x_1-2' })).toEqual({
      runUri: 'dagu://runs/a.b/x_1-2',
      logsUri: 'dagu://runs/a.b/x_1-2/logs',
    });
  });
});
