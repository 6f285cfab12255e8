import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DaguError } from '@dagu-mcp/contracts';
import { createRunTestEnv, stepOf, testContext, type RunTestEnv } from '../test-fixtures/run-test-env';
import { retryRun } from '../src/runs/run-retry';
import { stopRun } from '../src/runs/run-stop';
import { readStepLog } from '../src/read/run-logs';
import { daguErrorOf } from '../../../packages/contracts/test-fixtures/dagu-error-of';
import { isAlive } from '../test-fixtures/process-alive';

/**
 * Run control against the real PostgreSQL: stop (process groups killed),
 * retry (whole and from a step), the queue, id and singleton conflicts, and
 * the run events published on every status change.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('control');
});
afterAll(async () => {
  await env.close();
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return (await daguErrorOf(promise)).code;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function runDir(name: string, id: string): string {
  return join(env.config.workDir, name, id);
}

describe('stop', () => {
  it('kills a running sleep 30 and its background child fast; steps and run end aborted', async () => {
    const id = await env.start(
      'stopme',
      `handler_on: {abort: {run: echo aborted-handler}}
steps:
  - name: sleeper
    run: 'sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; sleep 30'
  - {name: after, run: echo never, depends: [sleeper]}
`,
    );
    const dir = runDir('stopme', id);
    await waitFor(async () => (await readFile(join(dir, 'sh.pid'), 'utf8').catch(() => '')).trim() !== '', 5000);
    const shellPid = Number((await readFile(join(dir, 'sh.pid'), 'utf8')).trim());
    const bgPid = Number((await readFile(join(dir, 'bg.pid'), 'utf8')).trim());
    expect(isAlive(shellPid) && isAlive(bgPid)).toBe(true);
    const started = Date.now();
    const ref = await stopRun(env.deps, { dagName: 'stopme', dagRunId: id }, testContext());
    expect(Date.now() - started).toBeLessThan(2500);
    expect(ref).toMatchObject({ status: 3, statusLabel: 'aborted' });
    await waitFor(async () => !isAlive(shellPid) && !isAlive(bgPid), 2000);
    const detail = await env.waitForEnd('stopme', id);
    expect(stepOf(detail, 'sleeper').status).toBe(3);
    expect(stepOf(detail, 'after').status).toBe(3);
    expect(detail.handlers).toMatchObject({ onAbort: { status: 4 } });
    expect(await codeOf(stopRun(env.deps, { dagName: 'stopme', dagRunId: id }, testContext()))).toBe(
      'invalid_tool_input',
    );
  });

  it('an unknown run is resource_not_found', async () => {
    expect(await codeOf(stopRun(env.deps, { dagName: 'stopme', dagRunId: 'nope' }, testContext()))).toBe(
      'resource_not_found',
    );
  });
});

describe('retry', () => {
  const spec = `steps:
  - {name: a, run: 'echo a-ran'}
  - {name: b, run: 'test -f flag && echo b-ok', depends: [a]}
  - {name: c, run: 'echo c-ran', depends: [b]}
`;

  it('retries from a step keeping the other results, then with its downstream steps', async () => {
    const id = await env.start('retry-step', spec);
    const first = await env.waitForEnd('retry-step', id);
    expect(first.statusLabel).toBe('failed');
    expect(stepOf(first, 'c').status).toBe(3);
    await writeFile(join(runDir('retry-step', id), 'flag'), '');

    const only = await retryRun(env.deps, { dagName: 'retry-step', dagRunId: id, stepName: 'b' }, testContext());
    expect(only.attemptId).not.toBe(first.attemptId);
    const second = await env.waitForEnd('retry-step', id);
    expect(second.attemptId).toBe(only.attemptId);
    expect(stepOf(second, 'a').startedAt).toBe(stepOf(first, 'a').startedAt);
    expect(stepOf(second, 'b').status).toBe(4);
    expect(stepOf(second, 'c').status).toBe(3);
    expect(second.statusLabel).toBe('failed');

    await retryRun(
      env.deps,
      { dagName: 'retry-step', dagRunId: id, stepName: 'b', includeDownstream: true },
      testContext(),
    );
    const third = await env.waitForEnd('retry-step', id);
    expect(third.statusLabel).toBe('succeeded');
    expect(stepOf(third, 'a').startedAt).toBe(stepOf(first, 'a').startedAt);
    expect(stepOf(third, 'c').status).toBe(4);
    expect((await readStepLog(env.pool, { dagName: 'retry-step', dagRunId: id, stepName: 'a' })).stdoutContent).toBe(
      'a-ran',
    );
  });

  it('a whole retry runs every step again as a new attempt', async () => {
    const id = await env.start('retry-all', spec);
    const first = await env.waitForEnd('retry-all', id);
    await writeFile(join(runDir('retry-all', id), 'flag'), '');
    await retryRun(env.deps, { dagName: 'retry-all', dagRunId: id }, testContext());
    const second = await env.waitForEnd('retry-all', id);
    expect(second).toMatchObject({ statusLabel: 'succeeded', attemptNo: 2 });
    expect(stepOf(second, 'a').startedAt).not.toBe(stepOf(first, 'a').startedAt);
  });

  it('refuses a running run (conflict), an unknown step and an unknown run', async () => {
    const id = await env.start('retry-busy', 'steps: [{name: s, run: sleep 10}]\n');
    expect(await codeOf(retryRun(env.deps, { dagName: 'retry-busy', dagRunId: id }, testContext()))).toBe('conflict');
    await stopRun(env.deps, { dagName: 'retry-busy', dagRunId: id }, testContext());
    await env.waitForEnd('retry-busy', id);
    expect(
      await codeOf(retryRun(env.deps, { dagName: 'retry-busy', dagRunId: id, stepName: 'zz' }, testContext())),
    ).toBe('invalid_tool_input');
    expect(await codeOf(retryRun(env.deps, { dagName: 'retry-busy', dagRunId: 'nope' }, testContext()))).toBe(
      'resource_not_found',
    );
  });
});

describe('start, queue and conflicts', () => {
  it('refuses an invalid spec with the dag-spec errors', async () => {
    try {
      await env.start('invalid', 'steps: [{name: a}]\n');
      throw new Error('expected a failure');
    } catch (error) {
      expect(error).toBeInstanceOf(DaguError);
      expect(error).toMatchObject({
        code: 'invalid_tool_input',
        field: 'spec',
        details: { errors: [expect.stringMatching(/command/)] },
      });
    }
  });

  it('refuses a used run id and a singleton clash', async () => {
    const id = await env.start('busy', 'steps: [{name: s, run: sleep 10}]\n', { dagRunId: 'fixed-id-1' });
    expect(id).toBe('fixed-id-1');
    expect(await codeOf(env.start('busy', 'steps: [{name: s, run: "true"}]\n', { dagRunId: 'fixed-id-1' }))).toBe(
      'conflict',
    );
    expect(await codeOf(env.start('busy', 'steps: [{name: s, run: "true"}]\n', { singleton: true }))).toBe('conflict');
    await stopRun(env.deps, { dagName: 'busy', dagRunId: id }, testContext());
  });

  it('enqueued runs wait for a slot (max_active_runs 1) and a queued run can be stopped', async () => {
    const spec = 'steps: [{name: s, run: sleep 0.5}]\n';
    const first = await env.start('queued', spec, { enqueue: true });
    const second = await env.start('queued', spec, { enqueue: true });
    const third = await env.start('queued', spec, { enqueue: true });
    expect((await env.detail('queued', third)).statusLabel).toBe('queued');
    const stopped = await stopRun(env.deps, { dagName: 'queued', dagRunId: third }, testContext());
    expect(stopped.status).toBe(3);
    const a = await env.waitForEnd('queued', first);
    const b = await env.waitForEnd('queued', second);
    expect(a.statusLabel).toBe('succeeded');
    expect(b.statusLabel).toBe('succeeded');
    expect(Date.parse(b.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(a.finishedAt ?? ''));
    expect(b.queuedAt).toBeDefined();
    const events = env.publisher.events.filter((event) => event.dagRunId === second).map((event) => event.statusLabel);
    expect(events).toEqual(['queued', 'running', 'succeeded']);
  });

  it('publishes running then the terminal status, after both are in PostgreSQL', async () => {
    const id = await env.start('events', 'steps: [{name: s, run: "true"}]\n');
    const detail = await env.waitForEnd('events', id);
    const events = env.publisher.events.filter((event) => event.dagRunId === id);
    expect(events.map((event) => event.status)).toEqual([1, 4]);
    expect(events[1]).toMatchObject({
      name: 'events',
      attemptId: detail.attemptId,
      statusLabel: 'succeeded',
      at: detail.finishedAt,
    });
  });
});
