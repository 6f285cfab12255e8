import { approvalExecutor, humanTaskExecutor } from './checkpoint.executors';
import { hostActionExecutor } from './host-action.executor';
import { httpExecutor } from './http.executor';
import { shellExecutor } from './shell.executor';
import type { StepExecutorRegistry } from './step-executor-registry';

/**
 * Registers the executors that need nothing but the run context: command,
 * script, http, human task, approval, host actions. Sub-DAG and foreach executors come from
 * composition/ and foreach/ (they need the store and the engine's callbacks).
 */
export function registerBuiltinExecutors(registry: StepExecutorRegistry): StepExecutorRegistry {
  return registry
    .register('command', shellExecutor)
    .register('script', shellExecutor)
    .register('http', httpExecutor)
    .register('human_task', humanTaskExecutor)
    .register('approval', approvalExecutor)
    .register('host_action', hostActionExecutor);
}
