import type { ForeachRunner, SubDagRunner } from '../core/run-types';
import { STEP_KINDS } from '../core/step-kinds';
import { shellExecutor } from '../executors/shell.executor';
import { buildExecutorRegistry } from './run-engine';

const runner: SubDagRunner & ForeachRunner = { run: async () => ({ ok: true, aborted: false }) };

describe('the run engine builds a complete executor registry', () => {
  it("the engine's registry covers every step kind, sub-DAG and foreach with their own executors", () => {
    const registry = buildExecutorRegistry(runner, runner);
    for (const kind of STEP_KINDS) expect(registry.executorOf(kind)).toBeDefined();
    expect(registry.executorOf('sub_dag')).not.toBe(shellExecutor);
    expect(registry.executorOf('foreach')).not.toBe(shellExecutor);
    expect(registry.executorOf('command')).toBe(shellExecutor);
    expect(STEP_KINDS).toEqual([
      'command',
      'script',
      'http',
      'sub_dag',
      'foreach',
      'human_task',
      'approval',
      'host_action',
    ]);
  });
});
