import type { StepExecutor } from '../core/run-types';
import { registerBuiltinExecutors } from './builtin-executors';
import { StepExecutorRegistry } from './step-executor-registry';

const noop: StepExecutor = { publishesOutputs: true, run: async () => ({ ok: true, timedOut: false, aborted: false }) };

describe('step executor registry (start-up check)', () => {
  it('fails at start-up, naming them, when step kinds have no executor', () => {
    const registry = registerBuiltinExecutors(new StepExecutorRegistry());
    expect(() => registry.assertComplete()).toThrow(
      'run engine: no executor registered for step kinds sub_dag (sub-DAG steps (dag.run / dag.enqueue / call)), foreach (foreach steps)',
    );
  });

  it('refuses an executor for a kind the spec model does not produce', () => {
    expect(() => new StepExecutorRegistry().register('docker', noop)).toThrow(
      'cannot register an executor for unknown step kind "docker"',
    );
  });

  it('refuses a second executor for the same kind', () => {
    const registry = new StepExecutorRegistry().register('command', noop);
    expect(() => registry.register('command', noop)).toThrow('step kind "command" already has an executor');
  });

  it('never hands out a fallback: a kind without an executor throws instead of running as shell', () => {
    const registry = registerBuiltinExecutors(new StepExecutorRegistry());
    expect(() => registry.executorOf('sub_dag')).toThrow('no executor registered for step kind "sub_dag"');
    expect(() => registry.executorOf('foreach')).toThrow('no executor registered for step kind "foreach"');
  });
});
