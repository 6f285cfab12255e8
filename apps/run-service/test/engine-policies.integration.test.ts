import { createServer, type Server } from 'node:http';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';
import { readRunLogs, readStepLog } from '../src/read/run-logs';

/**
 * Step policies against the real PostgreSQL: retry_policy (with the
 * `retrying` status between tries), repeat_policy, timeout_sec of steps and
 * of the DAG, and the http.request action against a local HTTP server.
 */
let env: RunTestEnv;
let server: Server;
let baseUrl = '';

beforeAll(async () => {
  // The local server is loopback: http.request reaches it only where OUTBOUND_ALLOW_CIDRS lists it.
  env = await createRunTestEnv('policies', { outboundAllowCidrs: ['127.0.0.0/8'] });
  server = createServer((req, res) => {
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ title: 'delectus', completed: false, echo: req.headers['x-token'] ?? null }));
    } else {
      res.writeHead(404);
      res.end('nothing here\n');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  baseUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await env.close();
  await new Promise((resolve) => server.close(resolve));
});

async function run(name: string, spec: string) {
  const id = await env.start(name, spec);
  return env.waitForEnd(name, id);
}

describe('retry_policy', () => {
  it('retries a failing step up to the limit, reporting retrying (9) between tries', async () => {
    const id = await env.start(
      'retry',
      'steps: [{name: flaky, run: "echo try; exit 1", retry_policy: {limit: 2, interval_sec: 1}}]\n',
    );
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const detail = await env.detail('retry', id);
      seen.add(stepOf(detail, 'flaky').status);
      if (detail.status === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const detail = await env.waitForEnd('retry', id);
    expect(seen.has(9)).toBe(true);
    expect(stepOf(detail, 'flaky')).toMatchObject({ status: 2, retryCount: 2 });
    const log = await readStepLog(env.pool, { dagName: 'retry', dagRunId: id, stepName: 'flaky' });
    expect(log.stdoutContent).toBe('try\ntry\ntry');
    const logs = await readRunLogs(env.pool, { dagName: 'retry', dagRunId: id });
    expect(logs.schedulerLog.content).toMatch(/retry 1\/2/);
  });

  it('a retry that succeeds ends succeeded; exit_code limits which failures are retried', async () => {
    const detail = await run(
      'retry-ok',
      `steps:
  - name: second-time
    run: 'if [ -f marker ]; then echo ok; else touch marker; exit 1; fi'
    retry_policy: {limit: 3, interval_sec: 0}
  - name: not-retried
    run: exit 2
    retry_policy: {limit: 3, interval_sec: 0, exit_code: [1]}
`,
    );
    expect(stepOf(detail, 'second-time')).toMatchObject({ status: 4, retryCount: 1 });
    expect(stepOf(detail, 'not-retried').status).toBe(2);
    expect(stepOf(detail, 'not-retried')).not.toHaveProperty('retryCount');
  });
});

describe('repeat_policy', () => {
  it('v1-int-repeat-with-limit: repeats a step `limit` times', async () => {
    const detail = await run(
      'repeat',
      'steps: [{name: r, command: echo tick, repeatPolicy: {repeat: true, limit: 3, intervalSec: 0}}]\n',
    );
    const log = await readStepLog(env.pool, { dagName: 'repeat', dagRunId: detail.dagRunId, stepName: 'r' });
    expect(log.stdoutContent).toBe('tick\ntick\ntick');
    expect(detail.statusLabel).toBe('succeeded');
  });

  it('until a condition holds, and while an exit code matches', async () => {
    const detail = await run(
      'repeat-until',
      `steps:
  - name: count
    run: 'n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo $n'
    output: N
    repeat_policy: {repeat: until, condition: "\${N}", expected: "3", interval_sec: 0, limit: 10}
  - name: codes
    run: 'n=$(cat m 2>/dev/null || echo 0); n=$((n+1)); echo $n > m; [ $n -ge 2 ] && exit 0; exit 7'
    repeat_policy: {repeat: while, exit_code: [7], interval_sec: 0, limit: 10}
`,
    );
    const count = await readStepLog(env.pool, {
      dagName: 'repeat-until',
      dagRunId: detail.dagRunId,
      stepName: 'count',
    });
    expect(count.stdoutContent).toBe('1\n2\n3');
    expect(stepOf(detail, 'codes').status).toBe(4);
    expect(detail.statusLabel).toBe('succeeded');
  });
});

describe('timeouts', () => {
  it('a step over its timeout_sec is killed and fails with a timeout error', async () => {
    const started = Date.now();
    const detail = await run('step-timeout', 'steps: [{name: slow, run: sleep 20, timeout_sec: 1}]\n');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(stepOf(detail, 'slow')).toMatchObject({ status: 2, error: 'step timed out after 1s' });
    expect(detail.statusLabel).toBe('failed');
  });

  it('a DAG over its timeout_sec fails; running steps fail with the timeout error, the rest are canceled', async () => {
    const started = Date.now();
    const detail = await run(
      'dag-timeout',
      `timeout_sec: 1
handler_on: {failure: {run: echo failure-handler}}
steps:
  - {name: slow, run: sleep 20}
  - {name: next, run: echo never, depends: [slow]}
`,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(detail.statusLabel).toBe('failed');
    expect(detail.error).toMatch(/timed out after 1s/);
    expect(stepOf(detail, 'slow')).toMatchObject({ status: 2, error: expect.stringMatching(/timed out/) });
    expect(stepOf(detail, 'next').status).toBe(3);
    expect(detail.handlers).toMatchObject({ onFailure: { status: 4 } });
  });
});

describe('http.request', () => {
  it('the body is stdout, JSON output fields are selectable; a non-2xx status fails', async () => {
    const detail = await run(
      'http',
      `env: [{TOKEN: secret-1}]
steps:
  - id: get_todo
    action: http.request
    with: {method: GET, url: "${baseUrl}/json", headers: {X-Token: "\${TOKEN}"}}
    output:
      title: {from: stdout, decode: json, select: .title}
      echo: {from: stdout, decode: json, select: .echo}
  - id: show
    depends: [get_todo]
    run: 'echo "Todo: \${get_todo.output.title} \${get_todo.output.echo}"'
  - id: missing
    action: http.request
    with: {method: GET, url: "${baseUrl}/nope"}
`,
    );
    expect(stepOf(detail, 'get_todo').status).toBe(4);
    const shown = await readStepLog(env.pool, { dagName: 'http', dagRunId: detail.dagRunId, stepName: 'show' });
    expect(shown.stdoutContent).toBe('Todo: delectus secret-1');
    expect(stepOf(detail, 'missing')).toMatchObject({ status: 2, error: 'http status code not 2xx: 404 Not Found' });
    const body = await readStepLog(env.pool, { dagName: 'http', dagRunId: detail.dagRunId, stepName: 'missing' });
    // A non-2xx prints its status line and headers before the body (dagu-actions §1.2).
    expect(body.stdoutContent).toMatch(/^HTTP 404 Not Found\n(?:[a-z-]+: .*\n)+\nnothing here$/);
  });
});
