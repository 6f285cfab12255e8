/**
 * Run control end to end (spec 036; 021 run reads; dagu-model §1, §5, §6, §10):
 * the built stack as local processes, driven by the MCP SDK client. Each test
 * names the spec rule it proves.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, startStack, type Stack } from './stack';

const REFERENCES = ['dagu://reference/authoring', 'dagu://reference/tools', 'dagu://reference/notifications'];
const DAGS: Record<string, string> = {
  'exec-hello':
    'params: TARGET=none\nsteps:\n  - name: first\n    run: echo "first ${TARGET}"\n  - name: second\n    depends: first\n    run: echo second\n',
  'exec-sleep30': 'steps:\n  - name: nap\n    run: sleep 30\n',
  'exec-sleep5': 'steps:\n  - name: nap\n    run: sleep 5\n',
};
let stack: Stack;
let client: Client;
let flakyFlag: string;

type Sc = Record<string, unknown> & { run?: Record<string, unknown> & { steps: Array<Record<string, unknown>> } };
const scOf = (r: CallToolResult): Sc => r.structuredContent ?? {};

/** dagu_execute with raw arguments of any JSON type (dagu-model §10: never a -32602 for bad input). */
async function execute(args: unknown, onprogress?: (p: Progress) => void): Promise<{ result: CallToolResult; sc: Sc }> {
  const result = await client.request(
    { method: 'tools/call', params: { name: 'dagu_execute', arguments: args as Record<string, unknown> } },
    CallToolResultSchema,
    { timeout: 120_000, ...(onprogress !== undefined ? { onprogress, resetTimeoutOnProgress: true } : {}) },
  );
  return { result, sc: scOf(result) };
}

async function read(args: Record<string, unknown>): Promise<Sc & { data: Record<string, unknown> }> {
  const result = await client.callTool({ name: 'dagu_read', arguments: args });
  if (result.isError === true) throw new Error(`read failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as Sc & { data: Record<string, unknown> };
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const runStatus = async (name: string, dagRunId: string): Promise<number> =>
  Number((await read({ target: 'run', name, dagRunId })).data.status);

beforeAll(async () => {
  stack = await startStack();
  client = await connectClient(stack.mcpUrl);
  flakyFlag = `/tmp/dagu-e2e-${stack.id}-flaky`;
  DAGS['exec-flaky'] =
    `steps:\n  - name: a\n    run: echo a\n  - name: b\n    depends: a\n    run: test -f ${flakyFlag} || (touch ${flakyFlag}; exit 1)\n` +
    '  - name: c\n    depends: b\n    run: echo c\n';
  for (const [name, spec] of Object.entries(DAGS)) {
    const applied = await client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name, spec } });
    expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  }
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

describe('start and wait (036 §Semantics, §Output, §Wait)', () => {
  test('start + dag with wait → succeeded, the 021 run model, links, params re-encoded as JSON', async () => {
    const { result, sc } = await execute({
      action: 'start',
      name: 'exec-hello',
      params: { TARGET: 'orders' },
      wait: true,
      waitTimeoutSeconds: 30,
    });
    expect(result.isError).toBeFalsy();
    const runUri = `dagu://runs/exec-hello/${String(sc.dagRunId)}`;
    // 036 §Output: finished text, two resource links, the structured keys.
    expect(result.content).toEqual([
      { type: 'text', text: 'Dagu execute action completed. The run finished with status succeeded.' },
      { type: 'resource_link', uri: runUri, name: 'dag_run', mimeType: 'application/json' },
      { type: 'resource_link', uri: `${runUri}/logs`, name: 'dag_run_logs', mimeType: 'application/json' },
    ]);
    expect(sc).toMatchObject({
      action: 'start',
      targetType: 'dag',
      dagName: 'exec-hello',
      runUri,
      logsUri: `${runUri}/logs`,
      completed: true,
      status: 4,
      statusLabel: 'succeeded',
    });
    expect([...(sc.references as string[])].sort()).toEqual([...REFERENCES].sort());
    expect(sc).not.toHaveProperty('subscribe');
    // 021 run detail model / dagu-model §5.
    expect(sc.run).toMatchObject({
      name: 'exec-hello',
      dagRunId: sc.dagRunId,
      uri: runUri,
      logsUri: `${runUri}/logs`,
      status: 4,
      statusLabel: 'succeeded',
    });
    expect(sc.run?.attemptId).toEqual(expect.any(String));
    expect(sc.run?.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(sc.run?.steps.map((s) => [s.name, s.statusLabel, s.logUri])).toEqual([
      ['first', 'succeeded', `${runUri}/steps/first/logs`],
      ['second', 'succeeded', `${runUri}/steps/second/logs`],
    ]);
    // dagu-model §3: a run's JSON params override the DAG's by name.
    const log = await read({
      target: 'step_log',
      name: 'exec-hello',
      dagRunId: String(sc.dagRunId),
      stepName: 'first',
    });
    expect(log.data.stdoutContent).toContain('first orders');
  });

  test('start + inline_spec with wait runs the spec under name (036 §Semantics)', async () => {
    const { sc } = await execute({
      action: 'start',
      name: 'exec-inline',
      spec: 'steps:\n  - name: only\n    run: echo inline\n',
      wait: true,
    });
    expect(sc).toMatchObject({
      targetType: 'inline_spec',
      dagName: 'exec-inline',
      completed: true,
      status: 4,
      run: { name: 'exec-inline' },
    });
  });

  test('a DAG changed and started at once runs its new YAML, every time (run-service keeps a copy of stored specs)', async () => {
    // run-service reads a stored DAG's YAML itself and keeps it; dag-service's change announcement
    // must reach it before the change is answered (docs/decisions.md "DAG spec cache").
    for (let version = 1; version <= 8; version += 1) {
      const spec = `steps:\n  - name: say\n    run: echo version-${version}\n`;
      const applied = await client.callTool({
        name: 'dagu_change',
        arguments: { mode: 'apply', name: 'exec-versions', spec },
      });
      expect(applied.structuredContent).toMatchObject({ applied: true });
      const { sc } = await execute({ action: 'start', name: 'exec-versions', wait: true, waitTimeoutSeconds: 30 });
      expect(sc).toMatchObject({ completed: true, status: 4 });
      const log = await read({
        target: 'step_log',
        name: 'exec-versions',
        dagRunId: String(sc.dagRunId),
        stepName: 'say',
      });
      expect(String(log.data.stdoutContent)).toBe(`version-${version}`);
    }
  }, 60_000);

  test('without wait: the fixed text and a subscribe sentence; generated ids are URL-safe and sortable (036)', async () => {
    const first = await execute({ action: 'start', name: 'exec-hello' });
    const second = await execute({ action: 'start', name: 'exec-hello' });
    expect(first.result.content[0]).toEqual({ type: 'text', text: 'Dagu execute action completed.' });
    expect(first.sc.subscribe).toEqual(expect.stringContaining(String(first.sc.runUri)));
    expect(first.sc).not.toHaveProperty('completed');
    expect(String(first.sc.dagRunId)).toMatch(/^[-a-zA-Z0-9_]{1,64}$/);
    expect(String(second.sc.dagRunId) > String(first.sc.dagRunId)).toBe(true);
  });

  test('enqueue puts the run in its queue; it runs when a slot frees (036 §Semantics, status 5)', async () => {
    const { result, sc } = await execute({
      action: 'enqueue',
      name: 'exec-hello',
      queue: 'e2e-queue',
      labels: ['source=e2e'],
    });
    expect(result.isError).toBeFalsy();
    expect(sc).toMatchObject({ action: 'enqueue', targetType: 'dag' });
    const status = await until(
      () => runStatus('exec-hello', String(sc.dagRunId)),
      (s) => s === 4,
    );
    expect(status).toBe(4);
  });

  test('wait timeout on a sleep 5: success, completed=false, a sentence pointing at runUri (036 §Wait)', async () => {
    const started = Date.now();
    const { result, sc } = await execute({ action: 'start', name: 'exec-sleep5', wait: true, waitTimeoutSeconds: 1 });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result.isError).toBeFalsy();
    expect(sc).toMatchObject({ completed: false });
    expect([1, 5]).toContain(sc.status);
    expect(sc).not.toHaveProperty('run');
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(text).toContain(String(sc.runUri));
    expect(text).not.toBe('Dagu execute action completed.');
  });

  test('progress notifications while waiting with a progress token (dagu-model §10)', async () => {
    const progress: Progress[] = [];
    const spec = 'steps:\n  - name: nap\n    run: sleep 12\n';
    const { sc } = await execute(
      { action: 'start', name: 'exec-progress', spec, wait: true, waitTimeoutSeconds: 60 },
      (p) => progress.push(p),
    );
    expect(sc).toMatchObject({ completed: true, status: 4 });
    expect(progress.length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  test('notifications/cancelled ends the wait, never the run (dagu-model §10)', async () => {
    const dagRunId = `cancel-${stack.id}`;
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'dagu_execute', arguments: { action: 'start', name: 'exec-sleep30', dagRunId, wait: true } },
      undefined,
      {
        signal: controller.signal,
      },
    );
    await until(
      () => runStatus('exec-sleep30', dagRunId).catch(() => 0),
      (s) => s === 1,
    );
    controller.abort();
    await expect(call).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 500));
    expect(await runStatus('exec-sleep30', dagRunId)).toBe(1);
    await execute({ action: 'stop', name: 'exec-sleep30', dagRunId, wait: true });
  });
});

describe('stop and retry (036 §Semantics)', () => {
  test('stop of a running sleep 30 → aborted, its step aborted', async () => {
    const { sc: started } = await execute({ action: 'start', name: 'exec-sleep30' });
    const dagRunId = String(started.dagRunId);
    await until(
      () => runStatus('exec-sleep30', dagRunId),
      (s) => s === 1,
    );
    const { sc } = await execute({
      action: 'stop',
      name: 'exec-sleep30',
      dagRunId,
      wait: true,
      waitTimeoutSeconds: 20,
    });
    expect(sc).toMatchObject({
      action: 'stop',
      targetType: 'run',
      dagRunId,
      completed: true,
      status: 3,
      statusLabel: 'aborted',
    });
    expect(sc.run?.steps[0]).toMatchObject({ name: 'nap', statusLabel: 'aborted' });
    // stopping a run that is not running is invalid_tool_input (036 §Errors)
    expect((await execute({ action: 'stop', name: 'exec-sleep30', dagRunId })).sc).toMatchObject({
      code: 'invalid_tool_input',
    });
  });

  test('retry from a step with includeDownstream, then the whole run; same dagRunId, new attempt (036, dagu-model §10)', async () => {
    const { sc: failed } = await execute({ action: 'start', name: 'exec-flaky', wait: true });
    expect(failed).toMatchObject({ completed: true, status: 2, statusLabel: 'failed' });
    const dagRunId = String(failed.dagRunId);
    const { sc: partial } = await execute({
      action: 'retry',
      name: 'exec-flaky',
      dagRunId,
      stepName: 'b',
      includeDownstream: true,
      wait: true,
    });
    expect(partial).toMatchObject({ action: 'retry', targetType: 'run', dagRunId, completed: true, status: 4 });
    expect(partial.run?.attemptId).not.toBe(failed.run?.attemptId);
    const steps = partial.run?.steps ?? [];
    expect(steps.map((s) => s.statusLabel)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // step a kept its result: it did not start again.
    expect(steps[0]?.startedAt).toBe(failed.run?.steps[0]?.startedAt);
    const { sc: whole } = await execute({ action: 'retry', name: 'exec-flaky', dagRunId, wait: true });
    expect(whole).toMatchObject({ completed: true, status: 4 });
    expect(whole.run?.attemptId).not.toBe(partial.run?.attemptId);
    expect(whole.run?.steps[0]?.startedAt).not.toBe(failed.run?.steps[0]?.startedAt);
  });
});

describe('errors (036 §Errors, §Examples)', () => {
  test.each([
    [['start'], undefined],
    [{ action: 'restart', name: 'x' }, 'action'],
    [{ action: 'start', name: 'x', force: true }, 'force'],
    [{ action: 'retry', name: 'x' }, 'dagRunId'],
    [{ action: 'start', name: 'x', waitTimeoutSeconds: 5 }, 'waitTimeoutSeconds'],
    [{ action: 'start', name: 'x', targetType: 'job' }, 'targetType'],
    [{ action: 'start', name: 'x', targetType: 'dag', spec: 'steps: []' }, 'spec'],
    [{ action: 'start', name: 'x', targetType: 'inline_spec', spec: '   ' }, 'spec'],
    [{ action: 'start', name: 'x', targetType: 'run' }, 'targetType'],
    [{ action: 'stop', name: 'x', dagRunId: 'r', targetType: 'dag' }, 'targetType'],
    [{ action: 'start', name: '  ' }, 'name'],
    [{ action: 'start', name: 'x', queue: 'q' }, 'queue'],
    [{ action: 'retry', name: 'x', dagRunId: 'r', labels: ['a'] }, 'labels'],
    [{ action: 'stop', name: 'x', dagRunId: 'r', singleton: false }, 'singleton'],
    [{ action: 'start', name: 'x', stepName: 's' }, 'stepName'],
    [{ action: 'stop', name: 'x', dagRunId: 'bad/id' }, 'dagRunId'],
    [{ action: 'retry', name: 'x', dagRunId: 'r', includeDownstream: true }, 'stepName'],
    [{ action: 'start', name: 'x', wait: true, waitTimeoutSeconds: 301 }, 'waitTimeoutSeconds'],
  ])('%j → invalid_tool_input on %s', async (args, field) => {
    const { result, sc } = await execute(args);
    expect(result.isError).toBe(true);
    expect(sc.code).toBe('invalid_tool_input');
    expect(sc.field).toBe(field);
    expect(result.content).toEqual([{ type: 'text', text: sc.message }]);
  });

  test('unknown DAG → resource_not_found with didYouMean; unknown run → resource_not_found', async () => {
    const { sc } = await execute({ action: 'start', name: 'exec-helo' });
    expect(sc).toMatchObject({ code: 'resource_not_found', action: 'start', targetType: 'dag', dagName: 'exec-helo' });
    expect((sc.details as { didYouMean: string[] }).didYouMean).toContain('exec-hello');
    expect((await execute({ action: 'retry', name: 'exec-hello', dagRunId: 'no-such-run' })).sc).toMatchObject({
      code: 'resource_not_found',
      dagRunId: 'no-such-run',
    });
  });

  test('conflicts: singleton clash, a run id already used, retrying a running run', async () => {
    const { sc: running } = await execute({ action: 'start', name: 'exec-sleep30', dagRunId: `solo-${stack.id}` });
    expect(running.dagRunId).toBe(`solo-${stack.id}`);
    expect((await execute({ action: 'start', name: 'exec-sleep30', singleton: true })).sc).toMatchObject({
      code: 'conflict',
      dagName: 'exec-sleep30',
    });
    expect((await execute({ action: 'start', name: 'exec-sleep30', dagRunId: `solo-${stack.id}` })).sc).toMatchObject({
      code: 'conflict',
      dagRunId: `solo-${stack.id}`,
    });
    await until(
      () => runStatus('exec-sleep30', `solo-${stack.id}`),
      (s) => s === 1,
    );
    expect((await execute({ action: 'retry', name: 'exec-sleep30', dagRunId: `solo-${stack.id}` })).sc).toMatchObject({
      code: 'conflict',
    });
    await execute({ action: 'stop', name: 'exec-sleep30', dagRunId: `solo-${stack.id}`, wait: true });
  });
});

describe('run reads (021 runs, run, run_logs, step_log; 020 resources)', () => {
  let dagRunId = '';
  beforeAll(async () => {
    dagRunId = String((await execute({ action: 'start', name: 'exec-hello', wait: true })).sc.dagRunId);
  });

  test('runs: target mode has no uri, URI mode echoes it; query filters; item model', async () => {
    const byTarget = await read({ target: 'runs', query: 'name=exec-hello&status=4&limit=2' });
    expect(byTarget.uri).toBeUndefined();
    const items = byTarget.data.items as Array<Record<string, unknown>>;
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThanOrEqual(2);
    for (const item of items)
      expect(item).toMatchObject({
        name: 'exec-hello',
        status: 4,
        statusLabel: 'succeeded',
        uri: `dagu://runs/exec-hello/${String(item.dagRunId)}`,
      });
    const byUri = await read({ uri: 'dagu://runs?name=exec-hello&limit=1' });
    expect(byUri.uri).toBe('dagu://runs?name=exec-hello&limit=1');
    expect(byUri.data.items).toHaveLength(1);
    expect(byUri.data.nextCursor).toEqual(expect.any(String));
  });

  test('run, run_logs and step_log in target and URI mode, with query options and echoes', async () => {
    const runUri = `dagu://runs/exec-hello/${dagRunId}`;
    const run = await read({ target: 'run', name: 'exec-hello', dagRunId });
    expect(run).toMatchObject({ target: 'run', uri: runUri, data: { dagRunId, status: 4 } });
    expect((await read({ uri: runUri })).data).toMatchObject({ dagRunId, status: 4 });
    const logs = await read({ target: 'run_logs', name: 'exec-hello', dagRunId, query: 'tail=2' });
    expect(logs.uri).toBe(`${runUri}/logs?tail=2`);
    expect(logs.data).toMatchObject({ schedulerLog: { lineCount: 2, hasMore: true } });
    expect((logs.data.stepLogs as unknown[]).length).toBe(2);
    const step = await read({
      target: 'step_log',
      name: 'exec-hello',
      dagRunId,
      stepName: 'second',
      query: 'stream=stdout&head=1',
    });
    expect(step).toMatchObject({
      target: 'step_log',
      name: 'exec-hello',
      dagRunId,
      stepName: 'second',
      uri: `${runUri}/steps/second/logs?stream=stdout&head=1`,
    });
    expect(step.data).toMatchObject({
      stdoutContent: expect.stringContaining('second'),
      stderrContent: '',
      lineCount: 1,
    });
    const byUri = await read({ uri: `${runUri}/steps/first/logs?tail=1` });
    expect(byUri).toMatchObject({ target: 'step_log', stepName: 'first', data: { lineCount: 1 } });
    const missing = await client.callTool({
      name: 'dagu_read',
      arguments: { target: 'run', name: 'exec-hello', dagRunId: 'nope' },
    });
    expect(missing.structuredContent).toMatchObject({ code: 'resource_not_found', target: 'run' });
  });

  test('resources/read of run URIs returns the same models as JSON; dag gains latestRun', async () => {
    const runUri = `dagu://runs/exec-hello/${dagRunId}`;
    for (const uri of [runUri, `${runUri}/logs`, `${runUri}/steps/first/logs`]) {
      const { contents } = await client.readResource({ uri });
      expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
      expect(JSON.parse(String((contents[0] as { text: string }).text))).toEqual(expect.any(Object));
    }
    const dag = await read({ target: 'dag', name: 'exec-hello' });
    expect(dag.data.latestRun).toMatchObject({
      dagRunId: expect.any(String),
      status: expect.any(Number),
      statusLabel: expect.any(String),
    });
  });
});
