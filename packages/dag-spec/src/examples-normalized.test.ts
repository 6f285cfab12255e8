/**
 * What the valid real examples normalize to (dagu-model.md §3): legacy
 * spellings, chain dependencies, sub-DAG documents, handlers, policies.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseDagSpec, topologicalOrder, type NormalizedDag, type NormalizedStep } from './index';

const DIR = path.join(__dirname, '..', 'test-fixtures', 'dagu-examples');

function dagOf(file: string): { dag: NormalizedDag; subDags: NormalizedDag[] } {
  const result = parseDagSpec(fs.readFileSync(path.join(DIR, file), 'utf8'), { name: 'example' });
  if (!result.dag) throw new Error(result.errors.join('\n'));
  return { dag: result.dag, subDags: result.subDags };
}

function step(dag: NormalizedDag, name: string): NormalizedStep {
  const found = dag.steps.find((s) => s.name === name);
  if (!found) throw new Error(`no step ${name}`);
  return found;
}

describe('normalized examples', () => {
  it('chain DAG: each step depends on the previous one (v1-chain-workflow)', () => {
    const { dag } = dagOf('v1-chain-workflow.yaml');
    expect(dag.type).toBe('chain');
    expect(dag.yamlName).toBe('data-processing-pipeline');
    expect(dag.steps.map((s) => s.depends)).toEqual([
      [],
      ['download-data'],
      ['validate-data'],
      ['process-data'],
      ['upload-results'],
    ]);
  });

  it('legacy command list is one argv (v1-command-array)', () => {
    expect(step(dagOf('v1-command-array.yaml').dag, 'step1').commands).toEqual([{ kind: 'exec', argv: ['echo', '1'] }]);
  });

  it('command + script: the command is the interpreter (v1-hello-world)', () => {
    const s = step(dagOf('v1-hello-world.yaml').dag, 'hello world');
    expect(s).toMatchObject({ kind: 'script', interpreter: ['sh'], script: 'echo "Hello, world!"\n' });
  });

  it('steps map keys are names; numeric depends match string names', () => {
    expect(dagOf('conf-steps-mapping.yaml').dag.steps.map((s) => s.name)).toEqual(['build']);
    expect(step(dagOf('conf-non-string-depends.yaml').dag, 'after_answer').depends).toEqual(['42']);
  });

  it('legacy handlerOn, tags string, cron schedule (v1-example-workflow)', () => {
    const { dag } = dagOf('v1-example-workflow.yaml');
    expect(dag.handlerOn.exit).toMatchObject({ name: 'onExit', commands: [{ kind: 'shell', line: 'echo finished' }] });
    expect(dag.labels).toEqual(['Daily']);
    expect(dag.schedule).toEqual(['0 0 * * *']);
    const order = topologicalOrder(dag).map((s) => s.name);
    expect(order.indexOf('Validate File')).toBeLessThan(order.indexOf('Merge'));
  });

  it('legacy retryPolicy / repeatPolicy camelCase keys', () => {
    expect(step(dagOf('v1-int-retry-with-backoff.yaml').dag, 'failing-step').retryPolicy).toEqual({
      limit: 3,
      intervalSec: 1,
      backoff: 2,
      exitCodes: [1],
    });
    expect(step(dagOf('v1-int-repeat-with-limit.yaml').dag, 'repeat-step').repeatPolicy).toEqual({
      mode: 'while',
      intervalSec: 0,
      limit: 3,
      exitCodes: [],
    });
  });

  it('legacy run: <dag> + params is a sub-DAG call (v1-int-call-sub)', () => {
    const s = step(dagOf('v1-int-call-sub.yaml').dag, 'step1');
    expect(s).toMatchObject({ kind: 'sub_dag', action: { type: 'dag.run', dag: 'sub', params: 'SUB_P1=foo' } });
    expect(s.output).toEqual({ kind: 'variable', name: 'OUT1' });
  });

  it('local sub-DAGs come from later documents (ex04-nested-workflows)', () => {
    const { dag, subDags } = dagOf('ex04-nested-workflows.yaml');
    expect(step(dag, 'run_child').action).toEqual({
      type: 'dag.run',
      dag: 'child-workflow',
      params: { task_id: '123' },
    });
    expect(subDags.map((d) => d.name)).toEqual(['child-workflow']);
    expect(subDags[0]?.params).toEqual([
      { name: 'task_id', default: '000', type: 'string', description: 'Task ID passed by the parent DAG' },
    ]);
  });

  it('defaults.retry_policy is inherited; http.request output fields (cli-http-requests)', () => {
    const get = step(dagOf('cli-http-requests.yaml').dag, 'get_todo');
    expect(get.retryPolicy).toEqual({ limit: 2, intervalSec: 5, exitCodes: [] });
    expect(get.action).toEqual({
      type: 'http.request',
      method: 'GET',
      url: 'https://jsonplaceholder.typicode.com/todos/1',
      headers: {},
    });
    expect(get.output).toEqual({
      kind: 'fields',
      fields: [
        { name: 'title', from: 'stdout', decode: 'json', select: '.title' },
        { name: 'completed', from: 'stdout', decode: 'json', select: '.completed' },
      ],
    });
  });

  it('params string, positional params, env list, precondition string', () => {
    expect(dagOf('v1-pass-parameters.yaml').dag.params).toEqual([
      { name: 'FOO', default: 'foo' },
      { name: 'BAR', default: 'bar' },
    ]);
    expect(dagOf('v1-define-condition.yaml').dag.params).toEqual([{ name: '1', default: 'foo' }]);
    expect(dagOf('ex03-scheduling.yaml').dag.env).toEqual([{ key: 'LOG_LEVEL', value: 'info' }]);
    expect(dagOf('intg-dag-precondition-false.yaml').dag.preconditions).toEqual([{ condition: 'false' }]);
  });

  it('foreach, approval, human task, continue_on', () => {
    const loop = step(dagOf('schema-foreach-collect.yaml').dag, 'summarize');
    expect(loop.foreach).toMatchObject({
      items: ['alpha', 'beta'],
      as: 'episode',
      maxConcurrent: 2,
      collect: { value: '${steps.write.stdout}' },
    });
    expect(step(dagOf('intg-approval-input-required.yaml').dag, 'review-step').approval).toEqual({
      prompt: 'Please provide feedback',
      input: ['FEEDBACK', 'NOTES'],
      required: ['FEEDBACK'],
    });
    expect(step(dagOf('ht-acknowledgement-shape.yaml').dag, 'acknowledge')).toMatchObject({
      kind: 'human_task',
      action: { type: 'human.task', prompt: 'Confirm maintenance' },
    });
    expect(step(dagOf('intg-mark-success.yaml').dag, 'fail-step').continueOn).toMatchObject({
      failure: true,
      markSuccess: true,
    });
  });
});
