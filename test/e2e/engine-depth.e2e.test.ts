/**
 * Engine depth end to end (issue "Composition, foreach, checkpoints,
 * recovery, retention"): the built stack as local processes, driven over the
 * REST API `/api/v1`. Each test names the rule it proves.
 */
import { startStack, type Stack } from './stack';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;
let admin: string;

type Body = Record<string, unknown>;
type Step = Body & { name: string; status: number };

async function api(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: Body }> {
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
async function runUntil(name: string, id: string, ok: (run: Body) => boolean, timeoutMs = 20_000): Promise<Body & { steps: Step[] }> {
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
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  const login = await fetch(`${stack.baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  admin = String(((await login.json()) as Body).token);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('checkpoints (dagu-model §1 status 7, §3 human.task / approval; 021 humanTask, approval)', () => {
  test('a human task parks the run at 7 with prompt and form, is completed over REST, and the run resumes by itself', async () => {
    await putDag('depth-ht', [
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
    ].join('\n'));
    const id = await start('depth-ht');
    const waiting = await runUntil('depth-ht', id, (run) => run.status === 7);
    expect(stepOf(waiting, 'review')).toMatchObject({ status: 7, humanTask: { prompt: 'Choose the deployment target', form: { required: ['environment'] } } });
    expect(waiting.humanTaskResumePending).toBe(false);
    const bad = await api(`/dag-runs/depth-ht/${id}/steps/review/human-task`, { method: 'POST', body: { values: { environment: 'moon' } } });
    expect(bad.status).toBe(400);
    const done = await api(`/dag-runs/depth-ht/${id}/steps/review/human-task`, { method: 'POST', body: { values: { environment: 'production' } } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ dagRunId: id, status: 1, runUri: `dagu://runs/depth-ht/${id}` });
    const finished = await runUntil('depth-ht', id, (run) => TERMINAL.has(Number(run.status)));
    expect(finished).toMatchObject({ status: 4, attemptNo: 2 });
    expect(stepOf(finished, 'review')).toMatchObject({ status: 4, outputs: { environment: 'production' } });
    const log = await api(`/dag-runs/depth-ht/${id}/steps/deploy/log`);
    expect(log.body.stdoutContent).toBe('deploying to production');
  });

  test('an approval gate rejected over REST ends the run rejected (8); a second decision is 409', async () => {
    await putDag('depth-gate', 'type: graph\nsteps:\n  - name: gate\n    run: "true"\n    approval: {prompt: Ship it?}\n  - name: after\n    depends: [gate]\n    run: echo after\n');
    const id = await start('depth-gate');
    const waiting = await runUntil('depth-gate', id, (run) => run.status === 7);
    expect(stepOf(waiting, 'gate')).toMatchObject({ status: 7, approval: { prompt: 'Ship it?' } });
    const rejected = await api(`/dag-runs/depth-gate/${id}/steps/gate/approval`, { method: 'POST', body: { decision: 'reject' } });
    expect(rejected.body).toMatchObject({ status: 8, statusLabel: 'rejected' });
    const finished = await runUntil('depth-gate', id, (run) => run.status === 8);
    expect(stepOf(finished, 'gate').status).toBe(8);
    expect(stepOf(finished, 'after').status).toBe(0);
    expect((await api(`/dag-runs/depth-gate/${id}/steps/gate/approval`, { method: 'POST', body: { decision: 'approve' } })).status).toBe(409);
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
    await putDag('depth-stored-child', 'params: WHO=nobody\nsteps:\n  - name: greet\n    run: echo "stored child greets ${WHO}"\n');
    await putDag('depth-parent', [
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
    ].join('\n'));
    const id = await start('depth-parent');
    const run = await runUntil('depth-parent', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(4);
    for (const [stepName, childName, line] of [['local', 'depth-local', 'local child 7'], ['stored', 'depth-stored-child', 'stored child greets parent']] as const) {
      const subRuns = stepOf(run, stepName).subRuns as Array<{ dagRunId: string; uri: string; dagName: string }>;
      expect(subRuns).toHaveLength(1);
      const child = subRuns[0];
      expect(child).toMatchObject({ dagName: childName, uri: `dagu://runs/depth-parent/${id}/sub/${child?.dagRunId ?? ''}` });
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

  test('a failing child fails the parent step with the child outcome', async () => {
    await putDag('depth-parent-fail', 'steps:\n  - name: call\n    action: dag.run\n    with: {dag: depth-bad}\n---\nname: depth-bad\nsteps:\n  - run: exit 4\n');
    const id = await start('depth-parent-fail');
    const run = await runUntil('depth-parent-fail', id, (r) => TERMINAL.has(Number(r.status)));
    expect(run.status).toBe(2);
    expect(String(stepOf(run, 'call').error)).toMatch(/^sub-DAG run depth-bad\/\S+ ended failed$/);
  });
});
