import { DaguError } from '@dagu-mcp/contracts';
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
import { as, UnreachableBus } from './unreachable-bus.test-support';

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
