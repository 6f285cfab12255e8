/**
 * "The first hour" (issue items 3, 8, 9, 12, 13) through the real stack: the gateway's root
 * page and JSON index, REST that reads like one API (status labels, YAML bodies, "required"),
 * an invalid preview that links no spec that does not exist, one structured log line per run
 * start and end and per step end (JSON, no ANSI codes, in a redirected log), and the run
 * metrics a platform team charts, read from run-service's `/metrics`.
 */
import { parseSamples, sampleValue } from '../deploy/prometheus';
import { restCall } from './rest-call';
import { connectClient, startStack, type Stack } from './stack';
import { toolResult } from './tool-result';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

let stack: Stack;
let client: Client;

beforeAll(async () => {
  // LOG_LEVEL info: the run lines are at info. LOG_PRETTY is left to its default (`auto`): stdout is a pipe here.
  stack = await startStack({ LOG_LEVEL: 'info', RUN_QUEUES: 'narrow:1' });
  client = await connectClient(stack.mcpUrl);
}, 90_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

async function metricsOf(app: 'run-service'): Promise<ReturnType<typeof parseSamples>> {
  const child = stack.processesOf(app)[0];
  if (child === undefined) throw new Error(`no ${app}`);
  const res = await fetch(`http://127.0.0.1:${stack.envOf(child).OPS_PORT}/metrics`);
  return parseSamples(await res.text());
}

async function waitForRun(name: string, dagRunId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const detail = await restCall(stack.baseUrl, `/dag-runs/${name}/${dagRunId}`);
    if (detail.body?.finishedAt !== undefined) return detail.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${dagRunId} did not end`);
}

describe('GET / (item 3)', () => {
  test('a browser gets the web console (issue 26), under its own CSP: its own scripts only, never framed', async () => {
    const res = await fetch(`${stack.baseUrl}/`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'.*frame-ancestors 'none'/);
    expect(await res.text()).toContain('<title>dagu-mcp console</title>');
  });

  test('Accept: application/json gets the JSON index', async () => {
    const res = await fetch(`${stack.baseUrl}/`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      name: 'dagu-mcp',
      mcp: '/mcp',
      restApi: '/api/v1',
      openApi: '/api/v1/openapi.json',
      docs: expect.objectContaining({ restApi: 'docs/rest-api.md' }),
    });
  });

  test('unknown API, MCP and OAuth paths, and any unknown path asked for JSON, are still JSON 404s', async () => {
    for (const [path, accept] of <Array<[string, string]>>[
      ['/api/v1/nowhere', 'text/html'],
      ['/mcp/nowhere', 'text/html'],
      ['/.well-known/nowhere', 'text/html'],
      ['/nowhere', 'application/json'],
    ]) {
      const res = await fetch(`${stack.baseUrl}${path}`, { headers: { accept } });
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.json()).toMatchObject({ code: 'resource_not_found' });
    }
  });
});

describe('REST that reads like one API (item 12)', () => {
  test('PUT /dags/{name} takes a YAML body as well as JSON {spec}', async () => {
    const yaml = await fetch(`${stack.baseUrl}/api/v1/dags/yaml-body`, {
      method: 'PUT',
      headers: { 'content-type': 'application/yaml' },
      body: 'steps:\n  - name: a\n    command: echo from-yaml\n',
    });
    expect(yaml.status).toBe(201);
    expect(await yaml.json()).toMatchObject({ valid: true, applied: true, created: true });
    const json = await restCall(stack.baseUrl, '/dags/yaml-body', {
      method: 'PUT',
      body: { spec: 'steps:\n  - name: a\n    command: echo from-json\n' },
    });
    expect(json.status).toBe(200);
    const invalid = await fetch(`${stack.baseUrl}/api/v1/dags/yaml-body/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: 'steps:\n  - name: a\n',
    });
    expect(await invalid.json()).toMatchObject({ valid: false });
  });

  test('a missing required field is reported as "required"', async () => {
    const res = await restCall(stack.baseUrl, '/dags/yaml-body', { method: 'PUT', body: {} });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', field: 'spec', message: 'spec: required' });
  });

  test('status filters accept labels as well as numbers', async () => {
    const ok = await restCall(stack.baseUrl, '/dags/labels-ok/start', {
      method: 'POST',
      body: { spec: 'steps:\n  - name: a\n    command: "true"\n' },
    });
    expect(ok.status).toBe(201);
    const bad = await restCall(stack.baseUrl, '/dags/labels-bad/start', {
      method: 'POST',
      body: { spec: 'steps:\n  - name: a\n    command: "false"\n' },
    });
    await waitForRun('labels-ok', String(ok.body?.dagRunId));
    await waitForRun('labels-bad', String(bad.body?.dagRunId));
    const byLabel = await restCall(stack.baseUrl, '/dag-runs?status=failed');
    const byNumber = await restCall(stack.baseUrl, '/dag-runs?status=2');
    const names = (reply: typeof byLabel) =>
      ((reply.body?.items ?? []) as Array<{ name?: string; dagName?: string }>).map((i) => i.name ?? i.dagName);
    expect(names(byLabel)).toContain('labels-bad');
    expect(names(byLabel)).not.toContain('labels-ok');
    expect(names(byLabel)).toEqual(names(byNumber));
    const both = await restCall(stack.baseUrl, '/dag-runs?status=failed,succeeded');
    expect(names(both)).toEqual(expect.arrayContaining(['labels-ok', 'labels-bad']));
    const unknown = await restCall(stack.baseUrl, '/dag-runs?status=finished');
    expect(unknown).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'status' } });
    // The message names the labels REST accepts, not only the integers of the 021 query.
    expect(String(unknown.body?.message)).toContain('partially_succeeded');
  });
});

describe('previews (item 13)', () => {
  const invalidSpec = 'steps:\n  - name: a\n';
  test('an invalid preview under a name with no stored DAG links its dagUri all the same (022; issue 49)', async () => {
    const result = toolResult(
      await client.callTool({
        name: 'dagu_change',
        arguments: { mode: 'preview', type: 'upsert_dag', name: 'never-stored', spec: invalidSpec },
      }),
    );
    expect(result.structuredContent).toMatchObject({ valid: false });
    expect(result.content.filter((c) => c.type === 'resource_link')).toEqual([
      expect.objectContaining({ uri: 'dagu://dags/never-stored/spec' }),
    ]);
  });

  test('an invalid preview of a stored DAG still links its stored spec', async () => {
    const result = toolResult(
      await client.callTool({
        name: 'dagu_change',
        arguments: { mode: 'preview', type: 'upsert_dag', name: 'yaml-body', spec: invalidSpec },
      }),
    );
    expect(result.structuredContent).toMatchObject({ valid: false });
    expect(result.content.filter((c) => c.type === 'resource_link')).toEqual([
      expect.objectContaining({ uri: 'dagu://dags/yaml-body/spec' }),
    ]);
  });
});

describe('seeing what runs do (items 8 and 9)', () => {
  test('one JSON line per run start and end and per step end, and the run metrics', async () => {
    const started = await restCall(stack.baseUrl, '/dags/observed/start', {
      method: 'POST',
      body: { spec: 'steps:\n  - name: first\n    command: echo one\n  - name: second\n    command: "false"\n' },
    });
    expect(started.status).toBe(201);
    const dagRunId = String(started.body?.dagRunId);
    await waitForRun('observed', dagRunId);

    const lines = stack
      .output()
      .split('\n')
      .filter((l) => l.includes(dagRunId))
      .map((l) => l.replace(/^\[[a-z-]+\] /, ''));
    // A redirected log is JSON lines: no ANSI colour codes.
    for (const line of lines) expect(line).not.toMatch(new RegExp(String.fromCharCode(27) + '\\['));
    const events = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const byMsg = (msg: string) => events.filter((e) => e.msg === msg);
    expect(byMsg('run started')).toEqual([
      expect.objectContaining({
        level: 30,
        dag: 'observed',
        dagRunId,
        startedBy: expect.objectContaining({ kind: 'user' }),
      }),
    ]);
    expect(byMsg('run ended')).toEqual([
      expect.objectContaining({ dag: 'observed', dagRunId, status: 'failed', durationMs: expect.any(Number) }),
    ]);
    expect(byMsg('step finished')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ step: 'first', status: 'succeeded', durationMs: expect.any(Number) }),
        expect.objectContaining({ step: 'second', status: 'failed', exitCode: 1 }),
      ]),
    );

    const samples = await metricsOf('run-service');
    expect(sampleValue(samples, 'dagu_runs_started_total', { dag: 'observed' })).toBe(1);
    expect(sampleValue(samples, 'dagu_runs_finished_total', { dag: 'observed', status: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'dagu_run_duration_seconds_count', { dag: 'observed', status: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'dagu_step_duration_seconds_count', { dag: 'observed', status: 'succeeded' })).toBe(1);
    // Read from PostgreSQL at scrape time: no run of this stack is active any more.
    expect(samples.filter((s) => s.name === 'dagu_runs_active' && s.value > 0)).toEqual([]);
  });

  test('queued runs and the age of the oldest show per named queue', async () => {
    const spec = 'steps:\n  - name: hold\n    command: sleep 5\n';
    const first = await restCall(stack.baseUrl, '/dags/narrow-a/enqueue', {
      method: 'POST',
      body: { spec, queue: 'narrow' },
    });
    const second = await restCall(stack.baseUrl, '/dags/narrow-b/enqueue', {
      method: 'POST',
      body: { spec, queue: 'narrow' },
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    let queued: number | undefined;
    let age: number | undefined;
    for (let i = 0; i < 50 && queued !== 1; i++) {
      const samples = await metricsOf('run-service');
      queued = sampleValue(samples, 'dagu_runs_active', { status: 'queued', queue: 'narrow' });
      age = sampleValue(samples, 'dagu_run_queue_oldest_age_seconds', { queue: 'narrow' });
      if (queued !== 1) await new Promise((r) => setTimeout(r, 100));
    }
    expect(queued).toBe(1);
    expect(age).toBeGreaterThanOrEqual(0);
    for (const [name, reply] of [
      ['narrow-a', first],
      ['narrow-b', second],
    ] as const)
      await restCall(stack.baseUrl, `/dag-runs/${name}/${String(reply.body?.dagRunId)}/stop`, { method: 'POST' });
  });

  test('checkpoint waits are timed', async () => {
    const gate =
      'type: graph\nsteps:\n  - name: gate\n    run: "true"\n    approval: {prompt: Ship it?}\n  - name: after\n    depends: [gate]\n    run: echo after\n';
    const started = await restCall(stack.baseUrl, '/dags/gated/start', { method: 'POST', body: { spec: gate } });
    expect(started.status).toBe(201);
    const dagRunId = String(started.body?.dagRunId);
    for (let i = 0; i < 100; i++) {
      const detail = await restCall(stack.baseUrl, `/dag-runs/gated/${dagRunId}`);
      if (detail.body?.statusLabel === 'waiting') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    let samples = await metricsOf('run-service');
    expect(sampleValue(samples, 'dagu_runs_active', { status: 'waiting' })).toBe(1);
    const decided = await restCall(stack.baseUrl, `/dag-runs/gated/${dagRunId}/steps/gate/approval`, {
      method: 'POST',
      body: { decision: 'approve' },
    });
    expect(decided.status).toBe(200);
    await waitForRun('gated', dagRunId);
    samples = await metricsOf('run-service');
    expect(sampleValue(samples, 'dagu_checkpoint_wait_seconds_count', { kind: 'approval', outcome: 'approved' })).toBe(
      1,
    );
  });
});
