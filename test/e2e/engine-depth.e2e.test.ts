/**
 * Engine depth end to end (issue "Composition, foreach, checkpoints,
 * recovery, retention"): the built stack as local processes, driven over the
 * REST API `/api/v1`. Each test names the rule it proves.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectClient, startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let admin: string;
let client: Client;

type Body = Record<string, unknown>;
type Step = Body & { name: string; status: number };

async function api(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${stack.baseUrl}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  const parsed: unknown = text === '' ? {} : JSON.parse(text);
  return { status: res.status, body: typeof parsed === 'object' && parsed !== null ? (parsed as Body) : {} };
}

async function putDag(name: string, spec: string): Promise<void> {
  const put = await api(`/dags/${name}`, { method: 'PUT', body: { spec } });
  expect([200, 201]).toContain(put.status);
}

async function start(name: string, params?: string): Promise<string> {
  const started = await api(`/dags/${name}/start`, { method: 'POST', body: params !== undefined ? { params } : {} });
  expect(started.status).toBe(201);
  return String(started.body.dagRunId);
}

/** Polls the run detail until `ok` (or fails after `timeoutMs`). */
async function runUntil(
  name: string,
  id: string,
  ok: (run: Body) => boolean,
  timeoutMs = 20_000,
): Promise<Body & { steps: Step[] }> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const run = (await api(`/dag-runs/${name}/${id}`)).body as Body & { steps: Step[] };
    if (ok(run)) return run;
    if (Date.now() > end) throw new Error(`run ${name}/${id} not as expected: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const stepOf = (run: { steps: Step[] }, name: string): Step => {
  const step = run.steps.find((s) => s.name === name);
  if (step === undefined) throw new Error(`no step ${name}`);
  return step;
};
const TERMINAL = new Set([2, 3, 4, 6, 8]);

beforeAll(async () => {
  // Short heartbeat and retention sweep so recovery and retention are observable within a test.
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    RUN_HEARTBEAT_MS: '500',
    // Hand-off slots are taken in turn, first in first out: with a few per replica, a run lands on
    // the recovery test's second replica within its first starts (docs/decisions.md "Hand-off slots").
    WORKER_CONCURRENCY: '4',
    RUN_RETENTION_SWEEP_MS: '1000',
  });
  const login = await fetch(`${stack.baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  admin = String(((await login.json()) as Body).token);
  client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${admin}` });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

describe('checkpoints (dagu-model §1 status 7, §3 human.task / approval; 021 humanTask, approval)', () => {
  test('a human task parks the run at 7 with prompt and form, is completed over REST, and the run resumes by itself', async () => {
    await putDag(
      'depth-ht',
      [
        'steps:',
        '  - id: review',
        '    action: human.task',
        '    with:',
        '      prompt: Choose the deployment target',
        '      form:',
        '        type: object',
        '        properties:',
        '          environment: {type: string, enum: [staging, production]}',
        '        required: [environment]',
        '  - id: deploy',
        '    depends: [review]',
        '    run: echo "deploying to ${steps.review.outputs.environment}"',
        '',
      ].join('\n'),
    );
    const id = await start('depth-ht');
    const waiting = await runUntil('depth-ht', id, (run) => run.status === 7);
    expect(stepOf(waiting, 'review')).toMatchObject({
      status: 7,
      humanTask: { prompt: 'Choose the deployment target', form: { required: ['environment'] } },
    });
    expect(waiting.humanTaskResumePending).toBe(false);
    const bad = await api(`/dag-runs/depth-ht/${id}/steps/review/human-task`, {
      method: 'POST',
      body: { values: { environment: 'moon' } },
    });
    expect(bad.status).toBe(400);
    const done = await api(`/dag-runs/depth-ht/${id}/steps/review/human-task`, {
      method: 'POST',
      body: { values: { environment: 'production' } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ dagRunId: id, status: 1, runUri: `dagu://runs/depth-ht/${id}` });
    const finished = await runUntil('depth-ht', id, (run) => TERMINAL.has(Number(run.status)));
    expect(finished).toMatchObject({ status: 4, attemptNo: 2 });
    expect(stepOf(finished, 'review')).toMatchObject({ status: 4, outputs: { environment: 'production' } });
    const log = await api(`/dag-runs/depth-ht/${id}/steps/deploy/log`);
    expect(log.body.stdoutContent).toBe('deploying to production');
  });

  test('an approval gate rejected over REST ends the run rejected (8); a second decision is 409', async () => {
    await putDag(
      'depth-gate',
      'type: graph\nsteps:\n  - name: gate\n    run: "true"\n    approval: {prompt: Ship it?}\n  - name: after\n    depends: [gate]\n    run: echo after\n',
    );
    const id = await start('depth-gate');
    const waiting = await runUntil('depth-gate', id, (run) => run.status === 7);
    expect(stepOf(waiting, 'gate')).toMatchObject({ status: 7, approval: { prompt: 'Ship it?' } });
    const rejected = await api(`/dag-runs/depth-gate/${id}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'reject' },
    });
    expect(rejected.body).toMatchObject({ status: 8, statusLabel: 'rejected' });
    const finished = await runUntil('depth-gate', id, (run) => run.status === 8);
    expect(stepOf(finished, 'gate').status).toBe(8);
    expect(stepOf(finished, 'after').status).toBe(0);
    expect(
      (await api(`/dag-runs/depth-gate/${id}/steps/gate/approval`, { method: 'POST', body: { decision: 'approve' } }))
        .status,
    ).toBe(409);
  });

  test('a rejected gate with rewind_to runs the rewound steps again with the rejection input, then waits again', async () => {
    await putDag(
      'depth-rewind',
      'steps:\n  - name: build\n    run: echo "build ${FEEDBACK:-first}"\n  - name: gate\n    depends: [build]\n    run: "true"\n    approval: {input: [FEEDBACK], rewind_to: build}\n',
    );
    const id = await start('depth-rewind');
    const first = await runUntil('depth-rewind', id, (run) => run.status === 7);
    // Rejection input is limited to the gate's declared inputs: it cannot reset PATH of the re-run steps.
    const refused = await api(`/dag-runs/depth-rewind/${id}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'reject', input: { PATH: '/nonexistent' } },
    });
    expect(refused.status).toBe(400);
    // PATH is reserved for every input (dagu-model §3); other undeclared names are refused too.
    expect(JSON.stringify(refused.body)).toContain('PATH is reserved');
    const undeclared = await api(`/dag-runs/depth-rewind/${id}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'reject', input: { OTHER: 'x' } },
    });
    expect(undeclared.status).toBe(400);
    expect(JSON.stringify(undeclared.body)).toContain('OTHER is not an input of the approval');
    const rejected = await api(`/dag-runs/depth-rewind/${id}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'reject', input: { FEEDBACK: 'again' } },
    });
    expect(rejected.body).toMatchObject({ status: 1 });
    await runUntil('depth-rewind', id, (run) => run.status === 7 && run.attemptId !== first.attemptId);
    expect((await api(`/dag-runs/depth-rewind/${id}/steps/build/log`)).body.stdoutContent).toBe('build again');
    await api(`/dag-runs/depth-rewind/${id}/steps/gate/approval`, { method: 'POST', body: { decision: 'approve' } });
    expect((await runUntil('depth-rewind', id, (run) => TERMINAL.has(Number(run.status)))).status).toBe(4);
  });

  test('stop ends a waiting run (aborted)', async () => {
    const id = await start('depth-gate');
    await runUntil('depth-gate', id, (run) => run.status === 7);
    const stopped = await api(`/dag-runs/depth-gate/${id}/stop`, { method: 'POST' });
    expect(stopped.body).toMatchObject({ status: 3 });
  });
});

describe('composition (dagu-model §3 dag.run / call, §5 subRuns)', () => {
  test('a local sub-DAG and a stored DAG run as child runs; the parent waits and takes their outcome', async () => {
    await putDag(
      'depth-stored-child',
      'params: WHO=nobody\nsteps:\n  - name: greet\n    run: echo "stored child greets ${WHO}"\n',
    );
    await putDag(
      'depth-parent',
      [
        'type: graph',
        'steps:',
        '  - id: local',
        '    action: dag.run',
        '    with: {dag: depth-local, params: "N=7"}',
        '  - id: stored',
        '    action: dag.run',
        '    with: {dag: depth-stored-child, params: {WHO: parent}}',
        '    depends: [local]',
        '---',
        'name: depth-local',
        'params: N=0',
        'steps:',
        '  - name: count',
        '    run: echo "local child ${N}"',
        '',
      ].join('\n'),
    );
    const id = await start('depth-parent');
    const run = await runUntil('depth-parent', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(4);
    for (const [stepName, childName, line] of [
      ['local', 'depth-local', 'local child 7'],
      ['stored', 'depth-stored-child', 'stored child greets parent'],
    ] as const) {
      const subRuns = stepOf(run, stepName).subRuns as Array<{ dagRunId: string; uri: string; dagName: string }>;
      expect(subRuns).toHaveLength(1);
      const child = subRuns[0];
      expect(child).toMatchObject({
        dagName: childName,
        uri: `dagu://runs/depth-parent/${id}/sub/${child?.dagRunId ?? ''}`,
      });
      const detail = await api(`/dag-runs/${childName}/${child?.dagRunId ?? ''}`);
      expect(detail.body).toMatchObject({ status: 4 });
      const firstStep = (detail.body.steps as Step[])[0]?.name ?? '';
      const log = await api(`/dag-runs/${childName}/${child?.dagRunId ?? ''}/steps/${firstStep}/log`);
      expect(log.body.stdoutContent).toBe(line);
    }
    // Child runs are addressed under their root, not listed.
    const listed = await api('/dag-runs?name=depth-local');
    expect(listed.body.items).toEqual([]);
  });

  test('an approval inside a child run makes the root wait (7); approved, the root goes on', async () => {
    await putDag(
      'depth-waiting-parent',
      'steps:\n  - id: call\n    action: dag.run\n    with: {dag: depth-gated}\n  - id: after\n    depends: [call]\n    run: echo after\n---\nname: depth-gated\nsteps:\n  - name: gate\n    run: "true"\n    approval: {prompt: ok?}\n',
    );
    const id = await start('depth-waiting-parent');
    const waiting = await runUntil('depth-waiting-parent', id, (run) => run.status === 7);
    const child = (stepOf(waiting, 'call').subRuns as Array<{ dagRunId: string }>)[0]?.dagRunId ?? '';
    expect((await api(`/dag-runs/depth-gated/${child}`)).body).toMatchObject({ status: 7 });
    expect(
      (
        await api(`/dag-runs/depth-gated/${child}/steps/gate/approval`, {
          method: 'POST',
          body: { decision: 'approve' },
        })
      ).status,
    ).toBeLessThan(300);
    const done = await runUntil('depth-waiting-parent', id, (run) => TERMINAL.has(Number(run.status)));
    expect(done.status).toBe(4);
    expect(stepOf(done, 'after').status).toBe(4);
  });

  test('a failing child fails the parent step with the child outcome', async () => {
    await putDag(
      'depth-parent-fail',
      'steps:\n  - name: call\n    action: dag.run\n    with: {dag: depth-bad}\n---\nname: depth-bad\nsteps:\n  - run: exit 4\n',
    );
    const id = await start('depth-parent-fail');
    const run = await runUntil('depth-parent-fail', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(2);
    expect(String(stepOf(run, 'call').error)).toMatch(/^sub-DAG run depth-bad\/\S+ ended failed$/);
  });
});

/** dagu_read in target mode; the structured `data`. */
async function read(args: Record<string, unknown>): Promise<Body> {
  const result = await client.callTool({ name: 'dagu_read', arguments: args });
  if (result.isError === true) throw new Error(`read failed: ${JSON.stringify(result.structuredContent)}`);
  const content = result.structuredContent as Body;
  return content.data as Body;
}

describe('foreach (dagu-model §1 buckets, §3 foreach; 021 foreach_items, foreach_item, step_log item)', () => {
  test('a foreach with a failing item: partially succeeded (dagu-model §3 "Run outcome"), per-item states and logs, failed first, status filter', async () => {
    await putDag(
      'depth-loop',
      [
        'steps:',
        '  - id: loop',
        '    foreach:',
        '      items: [ok1, boom, ok2]',
        '      as: name',
        '      max_concurrent: 2',
        '      steps:',
        '        - id: work',
        '          run: echo "working on ${foreach.name}"; test "${foreach.name}" != boom',
        '',
      ].join('\n'),
    );
    const id = await start('depth-loop');
    const run = await runUntil('depth-loop', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(6);
    expect(stepOf(run, 'loop')).toMatchObject({
      status: 6,
      error: '1 of 3 foreach items failed',
      foreachUri: `dagu://runs/depth-loop/${id}/steps/loop/foreach`,
    });
    const items = await read({ target: 'foreach_items', name: 'depth-loop', dagRunId: id, stepName: 'loop' });
    expect(items).toMatchObject({
      total: 3,
      counts: { succeeded: 2, failed: 1, running: 0, notStarted: 0, aborted: 0 },
    });
    expect((items.items as Body[]).map((i) => i.key)).toEqual(['boom', 'ok1', 'ok2']);
    const failed = await read({
      target: 'foreach_items',
      name: 'depth-loop',
      dagRunId: id,
      stepName: 'loop',
      query: 'status=failed',
    });
    expect((failed.items as Body[]).map((i) => i.item)).toEqual(['1']);
    const item = await read({ target: 'foreach_item', name: 'depth-loop', dagRunId: id, stepName: 'loop', item: '1' });
    expect(item).toMatchObject({
      item: '1',
      key: 'boom',
      status: 2,
      steps: [{ name: 'work', status: 2, hasStdout: true }],
    });
    const log = await read({
      target: 'step_log',
      name: 'depth-loop',
      dagRunId: id,
      stepName: 'loop',
      item: '2',
      bodyStepName: 'work',
    });
    expect(log.stdoutContent).toBe('working on ok2');
  });

  test('a nested foreach: inner items listed by parent and addressed as <foreachParent>.<index>', async () => {
    await putDag(
      'depth-nested',
      [
        'steps:',
        '  - id: outer',
        '    foreach:',
        '      items: [a, b]',
        '      as: o',
        '      steps:',
        '        - id: inner',
        '          foreach:',
        '            items: [1, 2]',
        '            as: i',
        '            steps:',
        '              - id: pair',
        '                run: echo "pair ${foreach.i}"',
        '',
      ].join('\n'),
    );
    const id = await start('depth-nested');
    const run = await runUntil('depth-nested', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(4);
    const outer = await read({
      target: 'foreach_item',
      name: 'depth-nested',
      dagRunId: id,
      stepName: 'outer',
      item: '0',
    });
    const parent = String((outer.steps as Body[])[0]?.foreachParent);
    expect(parent).toBe('0.inner');
    const inner = await read({
      target: 'foreach_items',
      name: 'depth-nested',
      dagRunId: id,
      stepName: 'outer',
      query: `parent=${parent}`,
    });
    expect(inner).toMatchObject({ total: 2, counts: { succeeded: 2 } });
    const log = await read({
      target: 'step_log',
      name: 'depth-nested',
      dagRunId: id,
      stepName: 'outer',
      item: '0.inner.1',
      bodyStepName: 'pair',
    });
    expect(log.stdoutContent).toBe('pair 2');
  });
});

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

describe('recovery (a run-service replica dies mid-run)', () => {
  test('its running run is failed by the surviving replica within 4 heartbeats, with the reason', async () => {
    // Steps see none of run-service's own environment (docs/security.md): replica B is told
    // apart by its own RUN_WORK_DIR, which reaches the step as DAG_RUN_WORK_DIR.
    const replicaBDir = join(tmpdir(), `depth-replica-b-${stack.id}`);
    await putDag('depth-recover', 'steps:\n  - name: work\n    run: echo "dir=$DAG_RUN_WORK_DIR"; sleep 20\n');
    const replicaB = await stack.spawnApp('run-service', { RUN_WORK_DIR: replicaBDir });
    // Replica B takes runs once its worker is up: wait for its /readyz (a loaded CI machine may take seconds).
    const opsPort = stack.envOf(replicaB).OPS_PORT ?? '';
    for (const until = Date.now() + 30_000; Date.now() < until;) {
      const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
      if (ready?.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const started: Array<{ id: string; replica: string }> = [];
    try {
      for (let i = 0; i < 12 && !started.some((s) => s.replica === 'B'); i++) {
        const id = await start('depth-recover');
        let out = '';
        for (let n = 0; n < 50 && out === ''; n++) {
          const { stdoutContent } = (await api(`/dag-runs/depth-recover/${id}/steps/work/log`)).body;
          out = typeof stdoutContent === 'string' ? stdoutContent : '';
          if (out === '') await new Promise((r) => setTimeout(r, 100));
        }
        started.push({ id, replica: out.startsWith(`dir=${replicaBDir}/`) ? 'B' : 'A' });
      }
    } finally {
      // Whatever happened, replica B must not outlive this test: it would take later tests' runs.
      if (!started.some((s) => s.replica === 'B')) await killHard(replicaB);
    }
    const onB = started.find((s) => s.replica === 'B');
    expect(onB).toBeDefined();
    const killedAt = Date.now();
    await killHard(replicaB);
    const failed = await runUntil('depth-recover', onB?.id ?? '', (r) => r.status === 2, 15_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(String(failed.error)).toMatch(/^run-service replica \S+ stopped responding \(no heartbeat for \d+s\)/);
    expect(stepOf(failed, 'work').status).toBe(2);
    // The runs of the surviving replica keep running (then are stopped by the test).
    for (const run of started.filter((s) => s.replica !== 'B')) {
      expect((await api(`/dag-runs/depth-recover/${run.id}`)).body.status).toBe(1);
      await api(`/dag-runs/depth-recover/${run.id}/stop`, { method: 'POST' });
    }
    rmSync(replicaBDir, { recursive: true, force: true });
  }, 90_000);
});

describe('retention (hist_retention_days)', () => {
  test('a finished run past its DAG retention is deleted with its logs in the background; others are kept', async () => {
    await putDag('depth-ret0', 'hist_retention_days: 0\nsteps:\n  - name: a\n    run: echo gone-soon\n');
    await putDag('depth-ret30', 'steps:\n  - name: a\n    run: echo kept\n');
    const gone = await start('depth-ret0');
    const kept = await start('depth-ret30');
    await runUntil('depth-ret30', kept, (r) => r.status === 4);
    const end = Date.now() + 15_000;
    let status = 200;
    while (status !== 404 && Date.now() < end) {
      status = (await api(`/dag-runs/depth-ret0/${gone}`)).status;
      if (status !== 404) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(404);
    expect((await api(`/dag-runs/depth-ret0/${gone}/steps/a/log`)).status).toBe(404);
    // The per-run working directory (RUN_WORK_DIR default) goes with the run, after its rows.
    const workDir = (dag: string, id: string): string => join(tmpdir(), 'dagu-mcp-runs', dag, id);
    for (const until = Date.now() + 5000; existsSync(workDir('depth-ret0', gone)) && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(workDir('depth-ret0', gone))).toBe(false);
    expect(existsSync(workDir('depth-ret30', kept))).toBe(true);
    expect((await api(`/dag-runs/depth-ret30/${kept}/steps/a/log`)).body.stdoutContent).toBe('kept');
  }, 30_000);
});
