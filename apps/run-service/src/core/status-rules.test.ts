import { RunStatus, runStatusLabel, StepStatus, stepStatusLabel } from '@dagu-mcp/contracts';
import { applyHandlerOutcome, initFailureStatus, rollupRunStatus } from './status-rules';

const ok = { status: StepStatus.succeeded, allowedFailure: false };
const skipped = { status: StepStatus.skipped, allowedFailure: false };
const failed = { status: StepStatus.failed, allowedFailure: false };
const allowed = { status: StepStatus.failed, allowedFailure: true };
const aborted = { status: StepStatus.aborted, allowedFailure: false };
const partial = { status: StepStatus.partiallySucceeded, allowedFailure: false };

describe('rollupRunStatus', () => {
  it.each([
    ['no steps', [], RunStatus.succeeded],
    ['all succeeded', [ok, ok], RunStatus.succeeded],
    ['succeeded and skipped', [ok, skipped], RunStatus.succeeded],
    ['all skipped', [skipped], RunStatus.succeeded],
    ['a plain failure', [ok, failed], RunStatus.failed],
    ['a failure and its aborted dependent', [failed, aborted], RunStatus.failed],
    ['allowed failure + success (intg-partial-success)', [allowed, ok], RunStatus.partiallySucceeded],
    ['allowed failure alone (intg-single-step-continue-on)', [allowed], RunStatus.failed],
    ['allowed failure and a plain failure', [allowed, ok, failed], RunStatus.failed],
    ['allowed failure + skipped only: nothing succeeded', [allowed, skipped], RunStatus.failed],
    ['a partially succeeded step alone (intg-subdag-child-partial)', [partial], RunStatus.partiallySucceeded],
    ['a partially succeeded step and its successful dependant', [partial, ok], RunStatus.partiallySucceeded],
    ['a partially succeeded step and a plain failure', [partial, failed], RunStatus.failed],
  ])('%s', (_label, steps, expected) => {
    expect(rollupRunStatus(steps)).toBe(expected);
  });

  it('an interruption wins over the steps', () => {
    expect(rollupRunStatus([ok], 'aborted')).toBe(RunStatus.aborted);
    expect(rollupRunStatus([ok], 'failed')).toBe(RunStatus.failed);
  });
});

describe('initFailureStatus', () => {
  it('a failing init handler aborts the run; a DAG timeout during it fails the run', () => {
    expect(initFailureStatus('none')).toBe(RunStatus.aborted);
    expect(initFailureStatus('aborted')).toBe(RunStatus.aborted);
    expect(initFailureStatus('failed')).toBe(RunStatus.failed);
  });
});

describe('applyHandlerOutcome', () => {
  it('a failing handler fails a successful run only', () => {
    expect(applyHandlerOutcome(RunStatus.succeeded, true)).toBe(RunStatus.failed);
    expect(applyHandlerOutcome(RunStatus.partiallySucceeded, true)).toBe(RunStatus.failed);
    expect(applyHandlerOutcome(RunStatus.aborted, true)).toBe(RunStatus.aborted);
    expect(applyHandlerOutcome(RunStatus.succeeded, false)).toBe(RunStatus.succeeded);
  });
});

describe('labels', () => {
  it('maps ints to the labels of dagu-model §1', () => {
    expect(runStatusLabel(6)).toBe('partially_succeeded');
    expect(stepStatusLabel(9)).toBe('retrying');
    expect(runStatusLabel(42)).toBe('unknown');
  });
});
