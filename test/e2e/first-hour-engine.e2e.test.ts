/**
 * The first hour, engine side (issue 21 items 4, 5, 6, 7, 10, 11): mistakes
 * caught at preview, refused params, values given at a checkpoint, and runs
 * that say what they do. The built stack as local processes, driven by the
 * MCP SDK client over HTTP and by plain REST calls; each test names the rule
 * it proves.
 */
import { readFileSync } from 'node:fs';
import {
  CallToolResultSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { daguExample } from '../../packages/dag-spec/test-fixtures/dagu-examples';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { useStackAndClient } from './stack';
import { textOf, toolResult } from './tool-result';

const env = useStackAndClient();

type Body = Record<string, unknown>;
type Step = Body & { name: string; status: number };
type Run = Body & { dagRunId: string; status: number; steps: Step[] };

const api = (path: string, init?: RestInit): Promise<RestReply> => restCall(env.stack.baseUrl, path, init);

async function call(name: string, args: Body, onprogress?: (p: Progress) => void): Promise<CallToolResult> {
  return env.client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
    timeout: 120_000,
    ...(onprogress !== undefined ? { onprogress, resetTimeoutOnProgress: true } : {}),
  });
}

const structured = (result: CallToolResult): Body => result.structuredContent ?? {};
const textOfResult = (result: CallToolResult): string =>
  result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');

async function apply(name: string, spec: string): Promise<Body> {
  const result = structured(
    toolResult(await env.client.callTool({ name: 'dagu_change', arguments: { mode: 'apply', name, spec } })),
  );
  expect(result).toMatchObject({ valid: true, applied: true });
  return result;
}

async function readRun(name: string, dagRunId: string): Promise<Run> {
  const result = toolResult(
    await env.client.callTool({ name: 'dagu_read', arguments: { target: 'run', name, dagRunId } }),
  );
  expect(result.isError).not.toBe(true);
  return structured(result).data as Run;
}

async function runUntil(name: string, dagRunId: string, ok: (run: Run) => boolean, timeoutMs = 30_000): Promise<Run> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const run = await readRun(name, dagRunId);
    if (ok(run)) return run;
    if (Date.now() > end) throw new Error(`run ${name}/${dagRunId} not as expected: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const TERMINAL = new Set([2, 3, 4, 6, 8]);
const stepOf = (run: Run, name: string): Step => {
  const step = run.steps.find((s) => s.name === name);
  if (step === undefined) throw new Error(`no step ${name} in ${JSON.stringify(run)}`);
  return step;
};

async function stdoutOf(name: string, dagRunId: string, step: string): Promise<string> {
  const log = await api(`/dag-runs/${name}/${dagRunId}/steps/${step}/log`);
  expect(log.status).toBe(200);
  return String(log.body?.stdoutContent);
}

async function start(name: string, args: Body = {}): Promise<string> {
  const result = toolResult(
    await env.client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name, ...args } }),
  );
  expect(result.isError).not.toBe(true);
  return String(structured(result).dagRunId);
}

describe('item 4: preview warns about references that will not resolve (022 added field `warnings`)', () => {
  const spec = [
    'params:',
    '  - DAY: mon',
    'steps:',
    '  - id: build',
    '    run: echo "tag=1" >> "$DAGU_OUTPUT_FILE"',
    '    outputs: [tag]',
    '  - id: early',
    '    run: echo "${steps.build.outputs.tag}"',
    '  - id: deploy',
    '    depends: [build]',
    '    run: echo "${steps.biuld.outputs.tag} ${steps.build.outputs.tga} ${params.MONTH} ${params.DAY}"',
    '',
  ].join('\n');

  test('dagu_change preview: valid, with one warning per reference naming step, field and reference', async () => {
    const result = toolResult(
      await env.client.callTool({ name: 'dagu_change', arguments: { mode: 'preview', name: 'fh-warn', spec } }),
    );
    expect(structured(result)).toMatchObject({ valid: true, errors: [], applied: false });
    expect(structured(result).warnings).toEqual([
      "step 'early': field 'run': step 'build' is not upstream of this step (add it to depends) (value: ${steps.build.outputs.tag})",
      "step 'deploy': field 'run': step 'biuld' does not exist; did you mean 'build'? (value: ${steps.biuld.outputs.tag})",
      "step 'deploy': field 'run': step 'build' declares no output 'tga'; did you mean 'tag'? (value: ${steps.build.outputs.tga})",
      "step 'deploy': field 'run': param 'MONTH' is not declared in params (value: ${params.MONTH})",
    ]);
    // 022's text stays exact (dagu-model §8): the warnings travel in structuredContent only.
    expect(result.content[0]).toEqual({ type: 'text', text: 'DAG spec is valid. Re-run with mode=apply to write it.' });
  });

  test('apply and REST validate carry them too; a real Dagu file gets none', async () => {
    expect((await apply('fh-warn', spec)).warnings).toHaveLength(4);
    const rest = await api('/dags/fh-warn/validate', { method: 'POST', body: { spec } });
    expect(rest.status).toBe(200);
    expect(rest.body?.warnings).toHaveLength(4);
    const real = readFileSync(daguExample('skill-human-input.yaml'), 'utf8');
    const preview = toolResult(
      await env.client.callTool({ name: 'dagu_change', arguments: { mode: 'preview', name: 'fh-real', spec: real } }),
    );
    expect(structured(preview)).toMatchObject({ valid: true, warnings: [] });
  });
});

describe('item 5: unknown keys and dependencies get a did-you-mean (spec 036 algorithm)', () => {
  test('`comand` suggests `command`, `depends: extrct` suggests `extract`', async () => {
    const spec =
      'steps:\n  - name: extract\n    comand: echo hi\n  - name: load\n    depends: extrct\n    run: echo load\n';
    const result = toolResult(
      await env.client.callTool({ name: 'dagu_change', arguments: { mode: 'preview', name: 'fh-typo', spec } }),
    );
    expect(structured(result)).toMatchObject({ valid: false });
    expect(structured(result).errors).toEqual([
      "step 'extract': field 'comand': unknown field; did you mean 'command'?",
      "step 'extract': field 'command': step command is required",
      "step load depends on non-existent step extrct; did you mean 'extract'?",
    ]);
  });
});

describe('item 6: a param value that breaks its declared type or enum is refused at start, naming it', () => {
  beforeAll(async () => {
    await apply(
      'fh-typed',
      [
        'params:',
        '  - name: COUNT',
        '    type: integer',
        '    default: 1',
        '  - name: STAGE',
        '    enum: [dev, prod]',
        '    default: dev',
        'steps:',
        '  - name: a',
        '    run: echo "$COUNT $STAGE"',
        '',
      ].join('\n'),
    );
  });

  test('dagu_execute start and enqueue: invalid_tool_input with field params.<NAME>', async () => {
    const started = toolResult(
      await env.client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'fh-typed', params: { COUNT: 'many' } },
      }),
    );
    expect(started.isError).toBe(true);
    expect(structured(started)).toMatchObject({ code: 'invalid_tool_input', field: 'params.COUNT' });
    expect(String(structured(started).message)).toContain('COUNT must be an integer');
    const enqueued = toolResult(
      await env.client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'enqueue', name: 'fh-typed', params: 'STAGE=moon' },
      }),
    );
    expect(structured(enqueued)).toMatchObject({ code: 'invalid_tool_input', field: 'params.STAGE' });
    expect(String(structured(enqueued).message)).toContain('STAGE must be one of dev, prod');
  });

  test('REST start: 400 invalid_request on params.<NAME>; a good value starts the run', async () => {
    const refused = await api('/dags/fh-typed/start', { method: 'POST', body: { params: { COUNT: '1.5' } } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'invalid_request', field: 'params.COUNT' });
    const good = await api('/dags/fh-typed/start', { method: 'POST', body: { params: { COUNT: '3', STAGE: 'prod' } } });
    expect(good.status).toBe(201);
  });
});

describe('item 7: values given at an approval reach later steps like human-task values', () => {
  test('as ${steps.<gate>.outputs.<NAME>} and as environment variables', async () => {
    await apply(
      'fh-approval-values',
      [
        'steps:',
        '  - id: ask',
        '    action: human.task',
        '    with:',
        '      prompt: Where?',
        '      form: {type: object, properties: {target: {type: string}}}',
        '  - id: gate',
        '    depends: [ask]',
        '    run: "true"',
        '    approval: {prompt: Ship it?, input: [NOTE], required: [NOTE]}',
        '  - id: use',
        '    depends: [gate]',
        `    run: echo "ref=\${steps.gate.outputs.NOTE} env=$NOTE target=$target"`,
        '',
      ].join('\n'),
    );
    const id = await start('fh-approval-values');
    await runUntil('fh-approval-values', id, (run) => stepOf(run, 'ask').status === 7);
    const answered = await api(`/dag-runs/fh-approval-values/${id}/steps/ask/human-task`, {
      method: 'POST',
      body: { values: { target: 'staging' } },
    });
    expect(answered.status).toBe(200);
    await runUntil('fh-approval-values', id, (run) => stepOf(run, 'gate').status === 7);
    const approved = await api(`/dag-runs/fh-approval-values/${id}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'approve', input: { NOTE: 'looks good' } },
    });
    expect(approved.status).toBe(200);
    const done = await runUntil('fh-approval-values', id, (run) => TERMINAL.has(run.status));
    expect(done.status).toBe(4);
    expect(await stdoutOf('fh-approval-values', id, 'use')).toBe('ref=looks good env=looks good target=staging');
  }, 60_000);
});

describe('item 10: runs that say what they do', () => {
  test('a step skipped by a precondition says why: skipReason {condition, expected, actual} (dagu-model §5)', async () => {
    await apply(
      'fh-skip',
      [
        'steps:',
        '  - name: value_check',
        '    preconditions:',
        '      - condition: "`echo no`"',
        '        expected: "yes"',
        '    run: echo never',
        '  - name: command_check',
        '    preconditions: ["test -d /nonexistent-dir-of-fh-skip"]',
        '    run: echo never',
        '  - name: runs',
        '    run: echo ran',
        '',
      ].join('\n'),
    );
    const id = await start('fh-skip');
    const run = await runUntil('fh-skip', id, (r) => TERMINAL.has(r.status));
    expect(stepOf(run, 'value_check')).toMatchObject({
      status: 5,
      skipReason: { condition: '`echo no`', expected: 'yes', actual: 'no' },
    });
    expect(stepOf(run, 'command_check')).toMatchObject({
      status: 5,
      skipReason: { condition: 'test -d /nonexistent-dir-of-fh-skip', expected: 'exit code 0', actual: 'exit code 1' },
    });
    expect(stepOf(run, 'runs').skipReason).toBeUndefined();
  });

  test('progress notifications of a wait name the running steps', async () => {
    await apply('fh-progress', 'steps:\n  - name: slow_step\n    run: sleep 12\n');
    const messages: string[] = [];
    const result = await call('dagu_execute', { action: 'start', name: 'fh-progress', wait: true }, (p) => {
      if (p.message !== undefined) messages.push(p.message);
    });
    expect(structured(result)).toMatchObject({ completed: true, status: 4 });
    expect(messages.some((m) => m.includes('running steps: slow_step'))).toBe(true);
  }, 60_000);

  test('dagRunId "latest" reads the latest run in dagu_read, dagu:// URIs and REST; a new run cannot take it', async () => {
    await apply('fh-latest', 'steps:\n  - name: a\n    run: echo hi\n');
    await start('fh-latest');
    const second = await start('fh-latest');
    await runUntil('fh-latest', second, (r) => TERMINAL.has(r.status));
    expect((await readRun('fh-latest', 'latest')).dagRunId).toBe(second);
    const resource = await env.client.readResource({ uri: 'dagu://runs/fh-latest/latest' });
    expect(JSON.parse(textOf(resource.contents[0]))).toMatchObject({ dagRunId: second });
    const rest = await api('/dag-runs/fh-latest/latest');
    expect(rest.body).toMatchObject({ dagRunId: second, status: 4 });
    const logs = toolResult(
      await env.client.callTool({
        name: 'dagu_read',
        arguments: { target: 'step_log', name: 'fh-latest', dagRunId: 'latest', stepName: 'a' },
      }),
    );
    expect(logs.isError).not.toBe(true);
    const refused = toolResult(
      await env.client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'fh-latest', dagRunId: 'latest' },
      }),
    );
    expect(structured(refused)).toMatchObject({ code: 'invalid_tool_input', field: 'dagRunId' });
    const restRefused = await api('/dags/fh-latest/start', { method: 'POST', body: { dagRunId: 'latest' } });
    expect(restRefused.status).toBe(400);
    expect(restRefused.body).toMatchObject({ field: 'dagRunId' });
    // A subscription to the latest run hears the next run that ends (dagu-model §8).
    const updated: string[] = [];
    env.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await env.client.subscribeResource({ uri: 'dagu://runs/fh-latest/latest' });
    const third = await start('fh-latest');
    await runUntil('fh-latest', third, (r) => TERMINAL.has(r.status));
    for (let i = 0; i < 50 && !updated.includes('dagu://runs/fh-latest/latest'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(updated).toContain('dagu://runs/fh-latest/latest');
    await env.client.unsubscribeResource({ uri: 'dagu://runs/fh-latest/latest' });
  }, 60_000);

  test('the scheduler log uses the run model words: a step not run after a failure is "aborted"', async () => {
    await apply(
      'fh-words',
      'steps:\n  - name: boom\n    run: exit 3\n  - name: after\n    depends: [boom]\n    run: echo never\n',
    );
    const id = await start('fh-words');
    const run = await runUntil('fh-words', id, (r) => TERMINAL.has(r.status));
    expect(stepOf(run, 'after').status).toBe(3);
    const logs = await api(`/dag-runs/fh-words/${id}/logs`);
    const scheduler = JSON.stringify(logs.body);
    expect(scheduler).toContain('step aborted: after');
    expect(scheduler).not.toContain('canceled');
  }, 60_000);
});

describe('item 11: a waiting result says how to answer it', () => {
  test('answer {method, path, role, surface} on the waiting step, the same in the text; the path works', async () => {
    await apply(
      'fh-answer',
      'steps:\n  - id: review\n    action: human.task\n    with:\n      prompt: OK?\n  - id: after\n    depends: [review]\n    run: echo after\n',
    );
    const result = await call('dagu_execute', { action: 'start', name: 'fh-answer', wait: true });
    const sc = structured(result);
    expect(sc).toMatchObject({ completed: false, status: 7 });
    const id = String(sc.dagRunId);
    const path = `/api/v1/dag-runs/fh-answer/${id}/steps/review/human-task`;
    const run = sc.run as Run;
    expect(stepOf(run, 'review').answer).toEqual({ method: 'POST', path, role: 'operator', surface: 'rest_api' });
    expect(textOfResult(result)).toContain(`POST ${path}`);
    const detail = await readRun('fh-answer', id);
    expect(stepOf(detail, 'review').answer).toMatchObject({ path });
    const answered = await api(path.replace('/api/v1', ''), { method: 'POST', body: { values: {} } });
    expect(answered.status).toBe(200);
    const done = await runUntil('fh-answer', id, (r) => TERMINAL.has(r.status));
    expect(done.status).toBe(4);
    expect(stepOf(done, 'review').answer).toBeUndefined();
  }, 60_000);
});
