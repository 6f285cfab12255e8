/**
 * Role boundaries, attacked through the real stack (docs/security.md "Role
 * boundaries"; dagu-model §3 "Values never become shell code" and the params
 * rule, §9 roles): two gateway replicas behind a round-robin proxy with
 * AUTH_MODE=builtin, driven by the MCP SDK client and plain HTTP. Each test
 * is an attack that worked before its fix.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, freePort, startStack, TEST_DATABASE_URL, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const TOKEN_SECRET = 'role-boundaries-token-secret-0123456789';
const MAX_FAILURES = 5;
const ROOT = join(__dirname, '..', '..');
let stack: Stack;
let adminToken: string;

const api = (path: string, init: RestInit & { base?: string } = {}): Promise<RestReply> =>
  restCall(init.base ?? stack.baseUrl, path, init);

async function createKey(role: string, surfaces: string[]): Promise<string> {
  const res = await api('/api-keys', {
    method: 'POST',
    token: adminToken,
    body: { name: `${role}-${surfaces.join('+')}-${Math.random().toString(36).slice(2, 8)}`, role, surfaces },
  });
  expect(res.status).toBe(201);
  return String(res.body?.key);
}

async function putDag(name: string, spec: string): Promise<void> {
  const res = await api(`/dags/${name}`, { method: 'PUT', token: adminToken, body: { spec } });
  expect([200, 201]).toContain(res.status);
}

async function createUser(username: string, role: string, password: string): Promise<string> {
  const res = await api('/users', { method: 'POST', token: adminToken, body: { username, role, password } });
  expect(res.status).toBe(201);
  return String(res.body?.id);
}

async function login(username: string, password: string, forwardedFor = '198.51.100.1') {
  return api('/auth/login', { method: 'POST', body: { username, password }, forwardedFor });
}

/** `/auth/me` with `token` on each gateway replica, bypassing the proxy. */
async function meOnEveryReplica(token: string): Promise<Array<{ status: number; role: unknown }>> {
  return Promise.all(
    stack.gateways.map(async (gateway) => {
      const res = await api('/auth/me', { token, base: gateway.url });
      return { status: res.status, role: res.body?.role };
    }),
  );
}

/** Polls until `check` holds, for at most `ms` (the stated revocation bound). */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The revocation bound of docs/security.md: 5 s (LOGIN_STATE_CACHE_MS), plus slack for the test machine. */
const REVOCATION_BOUND_MS = 5_500;

beforeAll(async () => {
  stack = await startStack(
    {
      AUTH_MODE: 'builtin',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TOKEN_SECRET,
      TRUST_PROXY: '1',
      LOGIN_MAX_FAILURES_PER_USER: String(MAX_FAILURES),
      LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
    },
    { gatewayReplicas: 2 },
  );
  const res = await login(ADMIN.username, ADMIN.password);
  expect(res.status).toBe(200);
  adminToken = String(res.body?.token);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('1. running caller-supplied YAML is authoring (dagu-model §9)', () => {
  const SPEC = 'steps:\n  - name: hello\n    run: echo hello\n';

  test('dagu_execute with inline_spec: operator → unauthorized, developer → runs', async () => {
    await putDag('stored-hello', SPEC);
    for (const [role, allowed] of [
      ['operator', false],
      ['developer', true],
    ] as const) {
      const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${await createKey(role, ['mcp'])}` });
      const inline = toolResult(
        await client.callTool({
          name: 'dagu_execute',
          arguments: { action: 'start', name: `inline-${role}`, targetType: 'inline_spec', spec: SPEC },
        }),
      );
      expect(inline.isError === true && inline.structuredContent?.code === 'unauthorized').toBe(!allowed);
      const enqueue = toolResult(
        await client.callTool({
          name: 'dagu_execute',
          arguments: { action: 'enqueue', name: `inline-${role}`, spec: SPEC },
        }),
      );
      expect(enqueue.isError === true && enqueue.structuredContent?.code === 'unauthorized').toBe(!allowed);
      const stored = toolResult(
        await client.callTool({ name: 'dagu_execute', arguments: { action: 'start', name: 'stored-hello' } }),
      );
      expect(stored.isError).not.toBe(true);
      await client.close();
    }
  });

  test('REST start and enqueue with a spec: operator → 403, stored DAG → 201', async () => {
    const operator = await createKey('operator', ['rest_api']);
    for (const action of ['start', 'enqueue']) {
      const res = await api(`/dags/rest-inline/${action}`, { method: 'POST', token: operator, body: { spec: SPEC } });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
    }
    expect((await api('/dags/stored-hello/start', { method: 'POST', token: operator, body: {} })).status).toBe(201);
    const developer = await createKey('developer', ['rest_api']);
    const res = await api('/dags/rest-inline/start', { method: 'POST', token: developer, body: { spec: SPEC } });
    expect(res.status).toBe(201);
  });
});

describe('2. values are data (dagu-model §3 "Values never become shell code")', () => {
  const marker = (): string => join(tmpdir(), `role-boundaries-pwned-${randomBytes(6).toString('hex')}`);

  /** Applies `spec` as `name`, starts it with `params` and waits for the end; the run's steps by name. */
  async function runDag(name: string, spec: string, params?: Record<string, string>) {
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${adminToken}` });
    try {
      const applied = toolResult(
        await client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } }),
      );
      expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
      const started = toolResult(
        await client.callTool(
          {
            name: 'dagu_execute',
            arguments: { action: 'start', name, wait: true, waitTimeoutSeconds: 40, ...(params ? { params } : {}) },
          },
          undefined,
          { timeout: 50_000 },
        ),
      );
      const run = (started.structuredContent as { run: { dagRunId: string; status: number } }).run;
      return { dagRunId: run.dagRunId, status: run.status };
    } finally {
      await client.close();
    }
  }

  async function stdoutOf(name: string, dagRunId: string, stepName: string): Promise<string> {
    const res = await api(`/dag-runs/${name}/${dagRunId}/steps/${stepName}/log`, { token: adminToken });
    const body = res.body as { content?: string; stdoutContent?: string; lines?: string[] } | undefined;
    return String(body?.content ?? body?.stdoutContent ?? (body?.lines ?? []).join('\n'));
  }

  test.each([
    ['run, unquoted', 'steps:\n  - name: s\n    run: echo ${params.X}\n'],
    ['run, in double quotes', 'steps:\n  - name: s\n    run: echo "${params.X}"\n'],
    ['run, in single quotes', "steps:\n  - name: s\n    run: echo '${params.X}'\n"],
    ['script', 'steps:\n  - name: s\n    script: |\n      echo ${X}\n      echo ${params.X}\n'],
    [
      'a value-match precondition',
      'steps:\n  - name: s\n    preconditions:\n      - condition: "${params.X}"\n        expected: "re:.*"\n    run: echo s\n',
    ],
    [
      'a command precondition',
      'steps:\n  - name: s\n    preconditions:\n      - condition: test -n "${params.X}"\n    run: echo s\n',
    ],
    ['a param default with backticks', 'params:\n  - Y: "`echo $X`"\nsteps:\n  - name: s\n    run: echo "$Y"\n'],
  ])(
    'a param value with $(…), backticks and ; is data, never run: %s',
    async (_label, body) => {
      const mark = marker();
      const spec = `params:\n  - X: none\n${body.replace(/^params:\n/, '')}`;
      const attack = `$(touch ${mark}) \`touch ${mark}\`; touch ${mark}`;
      const run = await runDag('values-attack', spec, { X: attack });
      expect(existsSync(mark)).toBe(false);
      expect(run.status).toBe(4);
    },
    60_000,
  );

  test("word splitting as Dagu users rely on: unquoted splits, the author's quotes keep one word", async () => {
    const spec = [
      'params:',
      '  - X: none',
      'steps:',
      '  - name: unquoted',
      "    run: printf '[%s]' ${params.X}",
      '  - name: double',
      `    run: printf '[%s]' "\${params.X}"`,
      '  - name: single',
      `    run: printf '[%s]' 'v=\${params.X}'`,
      '',
    ].join('\n');
    const run = await runDag('values-words', spec, { X: 'a b' });
    expect(run.status).toBe(4);
    expect(await stdoutOf('values-words', run.dagRunId, 'unquoted')).toBe('[a][b]');
    expect(await stdoutOf('values-words', run.dagRunId, 'double')).toBe('[a b]');
    expect(await stdoutOf('values-words', run.dagRunId, 'single')).toBe('[v=a b]');
  }, 60_000);

  test("a human-task value such as x'; touch …; ' stays one value inside the author's quotes", async () => {
    const mark = marker();
    const spec = [
      'steps:',
      '  - id: ask',
      '    action: human.task',
      '    with:',
      '      prompt: note?',
      '  - name: use',
      '    depends: [ask]',
      "    run: echo 'note=${steps.ask.outputs.note}'",
      '',
    ].join('\n');
    const waiting = await runDag('values-human', spec);
    expect(waiting.status).toBe(7);
    const value = `x'; touch ${mark}; '`;
    const answer = await api(`/dag-runs/values-human/${waiting.dagRunId}/steps/ask/human-task`, {
      method: 'POST',
      token: adminToken,
      body: { values: { note: value } },
    });
    expect(answer.status).toBeLessThan(300);
    let status = 7;
    for (let i = 0; i < 100 && [1, 5, 7].includes(status); i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = Number((await api(`/dag-runs/values-human/${waiting.dagRunId}`, { token: adminToken })).body?.status);
    }
    expect(existsSync(mark)).toBe(false);
    expect(status).toBe(4);
    expect(await stdoutOf('values-human', waiting.dagRunId, 'use')).toBe(`note=${value}`);
  }, 60_000);
});

describe('3. params (dagu-model §3 "Params")', () => {
  test('a DAG that declares params accepts only those names, naming every unknown one', async () => {
    await putDag('declared-params', 'params:\n  - DAY: mon\nsteps:\n  - name: a\n    run: echo "$DAY"\n');
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${adminToken}` });
    const bad = toolResult(
      await client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'declared-params', params: { DAY: 'tue', EVIL: 'x', OTHER: 'y' } },
      }),
    );
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ code: 'invalid_tool_input', field: 'params' });
    expect(String(bad.structuredContent?.message)).toContain('EVIL');
    expect(String(bad.structuredContent?.message)).toContain('OTHER');
    const good = toolResult(
      await client.callTool({
        name: 'dagu_execute',
        arguments: { action: 'start', name: 'declared-params', params: { DAY: 'tue' } },
      }),
    );
    expect(good.isError).not.toBe(true);
    await client.close();
    const rest = await api('/dags/declared-params/start', {
      method: 'POST',
      token: adminToken,
      body: { params: 'DAY=wed EVIL=1' },
    });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ code: 'invalid_request', field: 'params' });
  });

  test('a DAG that declares none accepts any name, but never a reserved one', async () => {
    await putDag('open-params', 'steps:\n  - name: a\n    run: echo hi\n');
    expect(
      (await api('/dags/open-params/start', { method: 'POST', token: adminToken, body: { params: { ANY: '1' } } }))
        .status,
    ).toBe(201);
    for (const name of ['PATH', 'BASH_ENV', 'LD_PRELOAD', 'DAG_RUN_ID', 'DAGU_OUTPUT_FILE', 'PYTHONPATH']) {
      const res = await api('/dags/open-params/start', {
        method: 'POST',
        token: adminToken,
        body: { params: { [name]: '/tmp/evil' } },
      });
      expect({ name, status: res.status, code: res.body?.code }).toEqual({
        name,
        status: 400,
        code: 'invalid_request',
      });
    }
  });

  test('reserved names are refused for declared params, outputs, human-task fields and approval inputs', async () => {
    const specs = [
      'params:\n  - LD_PRELOAD: x\nsteps:\n  - name: a\n    run: echo hi\n',
      'steps:\n  - name: a\n    run: echo hi\n    output: PATH\n',
      'steps:\n  - name: a\n    run: echo hi\n    outputs: [BASH_ENV]\n',
      'steps:\n  - id: ask\n    action: human.task\n    with:\n      prompt: p\n      form:\n        properties:\n          DAGU_OUTPUT_FILE: {type: string}\n',
      'steps:\n  - name: gate\n    run: echo hi\n    approval:\n      input: [LD_LIBRARY_PATH]\n',
    ];
    for (const spec of specs) {
      const res = await api('/dags/reserved/validate', { method: 'POST', token: adminToken, body: { spec } });
      expect({ spec, valid: res.body?.valid }).toEqual({ spec, valid: false });
      expect(JSON.stringify(res.body?.errors)).toContain('reserved');
    }
  });
});

describe('4. tokens follow the user', () => {
  test('a demotion takes effect on every replica within the bound, also in an MCP session opened before', async () => {
    const id = await createUser('carol', 'developer', 'carol-password-1');
    const token = String((await login('carol', 'carol-password-1')).body?.token);
    expect(await meOnEveryReplica(token)).toEqual([
      { status: 200, role: 'developer' },
      { status: 200, role: 'developer' },
    ]);
    const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${token}` });
    const apply = async () =>
      toolResult(
        await client.callTool({
          name: 'dagu_change',
          arguments: { name: 'carol-dag', spec: 'steps:\n  - name: a\n    run: echo hi\n', mode: 'apply' },
        }),
      );
    expect((await apply()).isError).not.toBe(true);
    expect((await api(`/users/${id}`, { method: 'PATCH', token: adminToken, body: { role: 'viewer' } })).status).toBe(
      200,
    );
    expect(
      await within(REVOCATION_BOUND_MS, async () =>
        (await meOnEveryReplica(token)).every((r) => r.status === 200 && r.role === 'viewer'),
      ),
    ).toBe(true);
    // The session opened as a developer now acts as the viewer the user is (requests alternate replicas).
    for (let i = 0; i < 2; i++) expect((await apply()).structuredContent).toMatchObject({ code: 'unauthorized' });
    await client.close();
  });

  test('a password reset and a delete end the old tokens on every replica', async () => {
    const id = await createUser('dan', 'developer', 'dan-password-1');
    const first = String((await login('dan', 'dan-password-1')).body?.token);
    await meOnEveryReplica(first); // both replicas cache the user
    expect(
      (await api(`/users/${id}`, { method: 'PATCH', token: adminToken, body: { password: 'dan-password-2' } })).status,
    ).toBe(200);
    expect(
      await within(REVOCATION_BOUND_MS, async () => (await meOnEveryReplica(first)).every((r) => r.status === 401)),
    ).toBe(true);
    const second = String((await login('dan', 'dan-password-2')).body?.token);
    expect((await meOnEveryReplica(second)).map((r) => r.status)).toEqual([200, 200]);
    expect((await api(`/users/${id}`, { method: 'DELETE', token: adminToken })).status).toBe(204);
    expect(
      await within(REVOCATION_BOUND_MS, async () => (await meOnEveryReplica(second)).every((r) => r.status === 401)),
    ).toBe(true);
  });

  test('admin:reset-password ends the admin’s old tokens on every replica', async () => {
    const old = String((await login(ADMIN.username, ADMIN.password)).body?.token);
    expect((await meOnEveryReplica(old)).map((r) => r.status)).toEqual([200, 200]);
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, 'apps/mcp-gateway/dist/cli/reset-admin-password.js')], {
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: TEST_DATABASE_URL,
          DB_SCHEMA: stack.schemaOf('mcp-gateway'),
          REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          BUS_PREFIX: `e2e-${stack.id}`,
          ADMIN_USERNAME: ADMIN.username,
          ADMIN_PASSWORD: 'admin-password-456',
        },
        stdio: 'ignore',
      });
      child.on('exit', resolve);
    });
    expect(code).toBe(0);
    expect(
      await within(REVOCATION_BOUND_MS, async () => (await meOnEveryReplica(old)).every((r) => r.status === 401)),
    ).toBe(true);
    ADMIN.password = 'admin-password-456';
    adminToken = String((await login(ADMIN.username, ADMIN.password)).body?.token);
    expect((await meOnEveryReplica(adminToken)).map((r) => r.status)).toEqual([200, 200]);
  });

  test('POST /auth/logout ends that one token on every replica, not the others', async () => {
    await createUser('erin', 'operator', 'erin-password-1');
    const one = String((await login('erin', 'erin-password-1')).body?.token);
    const other = String((await login('erin', 'erin-password-1')).body?.token);
    await meOnEveryReplica(one);
    expect((await api('/auth/logout', { method: 'POST', token: one })).status).toBe(204);
    expect((await meOnEveryReplica(one)).map((r) => r.status)).toEqual([401, 401]);
    expect((await meOnEveryReplica(other)).map((r) => r.status)).toEqual([200, 200]);
  });

  test('login tokens carry aud "dagu-mcp:login"; a token for another audience, or none, is refused', async () => {
    const res = await login(ADMIN.username, ADMIN.password);
    const token = String(res.body?.token);
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(payload.aud).toBe('dagu-mcp:login');
    const key = new TextEncoder().encode(TOKEN_SECRET);
    const forge = async (audience: string | undefined) => {
      let jwt = new SignJWT({ ...payload, aud: undefined })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('dagu-mcp')
        .setSubject(String(payload.sub))
        .setJti('forged')
        .setIssuedAt()
        .setExpirationTime('1h');
      if (audience !== undefined) jwt = jwt.setAudience(audience);
      return jwt.sign(key);
    };
    expect((await meOnEveryReplica(await forge('dagu-mcp:login'))).map((r) => r.status)).toEqual([200, 200]);
    expect((await meOnEveryReplica(await forge('dagu-mcp:oauth'))).map((r) => r.status)).toEqual([401, 401]);
    expect((await meOnEveryReplica(await forge(undefined))).map((r) => r.status)).toEqual([401, 401]);
  });
});

describe('5. brute-force limits cannot lock a user out', () => {
  test('wrong passwords from one address do not lock the user out from a clean address', async () => {
    await createUser('frank', 'viewer', 'frank-password-1');
    for (let i = 0; i < MAX_FAILURES + 5; i++) await login('frank', `wrong-${i}`, '203.0.113.7');
    const attacker = await login('frank', 'frank-password-1', '203.0.113.7');
    expect(attacker.status).toBe(429);
    expect(Number(attacker.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await login('frank', 'frank-password-1', '203.0.113.8')).status).toBe(200);
  }, 60_000);

  test('a burst of 30 parallel wrong logins gets 429 past the limit and hashes no more than the limit', async () => {
    await createUser('grace', 'viewer', 'grace-password-1');
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login('grace', `wrong-${i}`, '203.0.113.20')),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(MAX_FAILURES);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30 - MAX_FAILURES);
    // Every hashed wrong password leaves one auth.login.failed audit event.
    await new Promise((r) => setTimeout(r, 600)); // the audit log flushes every 200 ms
    const audit = await api('/audit?category=auth&limit=500', { token: adminToken });
    const failed = (audit.body?.items as Array<Record<string, unknown>>).filter(
      (e) => e.action === 'auth.login.failed' && e.target === 'grace',
    );
    expect(failed).toHaveLength(MAX_FAILURES);
  }, 60_000);

  test('X-Forwarded-For counts only through the trusted hops: spoofed entries do not dodge the limit', async () => {
    await createUser('heidi', 'viewer', 'heidi-password-1');
    const statuses: number[] = [];
    for (let i = 0; i < MAX_FAILURES + 2; i++) {
      // The client writes its own entry; the trusted proxy (this test) appends the real one.
      const res = await login('heidi', `wrong-${i}`, `10.9.9.${i}, 203.0.113.30`);
      statuses.push(res.status);
    }
    expect(statuses.slice(MAX_FAILURES)).toEqual([429, 429]);
  }, 60_000);

  test('TRUST_PROXY=true (every X-Forwarded-For entry trusted) refuses to start, saying why', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'apps/mcp-gateway/dist/main.js')], {
      env: { PATH: process.env.PATH ?? '', TRUST_PROXY: 'true', PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('TRUST_PROXY');
  });
});
