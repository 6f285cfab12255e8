import {
  ACTIVE_RUN_STATUSES,
  ENDED_RUN_STATUSES,
  RUN_STATUS_LABELS,
  RunStatus,
  STEP_STATUS_LABELS,
  StepStatus,
  TERMINAL_RUN_STATUSES,
  WAITING_RUN_STATUS,
  runStatusLabel,
  stepStatusLabel,
} from './run-status';

describe('run and step statuses (dagu-model §1)', () => {
  it.each(Object.entries(RunStatus))('run status %s has its label at its int', (name, code) => {
    expect(RUN_STATUS_LABELS[code]).toBe(name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    expect(runStatusLabel(code)).toBe(RUN_STATUS_LABELS[code]);
  });

  it.each(Object.entries(StepStatus))('step status %s has its label at its int', (name, code) => {
    expect(STEP_STATUS_LABELS[code]).toBe(name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    expect(stepStatusLabel(code)).toBe(STEP_STATUS_LABELS[code]);
  });

  it.each([-1, 10, 1.5])('an int outside the enum (%s) is labelled unknown', (code) => {
    expect(runStatusLabel(code)).toBe('unknown');
    expect(stepStatusLabel(code)).toBe('unknown');
  });

  it('the status groups keep their wire values', () => {
    expect([...TERMINAL_RUN_STATUSES].sort()).toEqual([2, 3, 4, 6, 8]);
    expect(WAITING_RUN_STATUS).toBe(7);
    expect([...ACTIVE_RUN_STATUSES].sort()).toEqual([1, 5, 7]);
    expect([...ENDED_RUN_STATUSES].sort()).toEqual([0, 2, 3, 4, 6, 8]);
  });
});
