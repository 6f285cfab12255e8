/**
 * `dagu_read target=workbook` through the real stack (Dagu spec 021 Workbook,
 * `workbook.md`, issue 20): the built apps with AUTH_MODE=builtin, driven by
 * the MCP SDK client over HTTP. Proves: a workbook a step wrote on one
 * run-service replica is read by another once the first is gone (the shared
 * work directory of docs/deployment.md "Workbook reads"); the developer role;
 * the model and the errors of 021; and that the password reaches no Redis
 * key, audit row or log line.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import {
  writeBigWorkbook,
  writeOneColumnWorkbook,
  writeOrdersWorkbook,
  writeProtectedWorkbook,
} from '../../apps/run-service/test-fixtures/workbook-files';
import { restCall, type RestInit, type RestReply } from './rest-call';
import { connectClient, startStack, TEST_DATABASE_URL, type Stack } from './stack';
import { toolResult } from './tool-result';

const ADMIN = { username: 'admin', password: 'admin-password-123' };
const PASSWORD = ` wb-${randomBytes(8).toString('hex')} `;
const MAX_BYTES = 100_000;
const LIBREOFFICE_FIXTURE = join(__dirname, '..', 'fixtures', 'workbooks', 'libreoffice-sales.xlsx');

let stack: Stack;
let adminToken: string;
let workDir: string;
let sourceDir: string;
const clients: Client[] = [];

const api = (path: string, init: RestInit = {}): Promise<RestReply> =>
  restCall(stack.baseUrl, path, { token: adminToken, ...init });

async function clientWithRole(role: string): Promise<Client> {
  const res = await api('/api-keys', {
    method: 'POST',
    body: { name: `wb-${role}-${randomBytes(3).toString('hex')}`, role, surfaces: ['mcp'] },
  });
  expect(res.status).toBe(201);
  const client = await connectClient(stack.mcpUrl, { authorization: `Bearer ${String(res.body?.key)}` });
  clients.push(client);
  return client;
}

async function readWorkbook(client: Client, args: Record<string, unknown>) {
  return toolResult(await client.callTool({ name: 'dagu_read', arguments: { target: 'workbook', ...args } }));
}

beforeAll(async () => {
  // One directory for every run-service replica: the shared work-directory volume of the Kubernetes manifests.
  workDir = mkdtempSync(join(tmpdir(), 'workbook-e2e-work-'));
  sourceDir = mkdtempSync(join(tmpdir(), 'workbook-e2e-src-'));
  await writeOrdersWorkbook(sourceDir);
  await writeProtectedWorkbook(workDir, PASSWORD);
  await writeBigWorkbook(workDir, 10_050);
  await writeOneColumnWorkbook(workDir, 5001);
  copyFileSync(LIBREOFFICE_FIXTURE, join(workDir, 'libreoffice-sales.xlsx'));
  writeFileSync(join(workDir, 'notes.xlsx'), 'not a zip at all');
  stack = await startStack({
    AUTH_MODE: 'builtin',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    TOKEN_SECRET: 'workbook-e2e-token-secret-0123456789',
    RUN_WORK_DIR: workDir,
    RUN_WORKBOOK_MAX_BYTES: String(MAX_BYTES),
  });
  const login = await restCall(stack.baseUrl, '/auth/login', { method: 'POST', body: ADMIN });
  expect(login.status).toBe(200);
  adminToken = String(login.body?.token);
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await stack?.stop();
  rmSync(workDir, { recursive: true, force: true });
  rmSync(sourceDir, { recursive: true, force: true });
});

describe('where the file is: a shared work directory across run-service replicas (docs/deployment.md)', () => {
  test('a workbook a step wrote on replica A is read through replica B after A is killed', async () => {
    const put = await api('/dags/wb-export', {
      method: 'PUT',
      body: { spec: `steps:\n  - name: export\n    run: cp '${join(sourceDir, 'orders.xlsx')}' report.xlsx\n` },
    });
    expect([200, 201]).toContain(put.status);
    const started = await api('/dags/wb-export/start', { method: 'POST', body: {} });
    expect(started.status).toBe(201);
    const runId = String(started.body?.dagRunId);
    for (let i = 0; ; i++) {
      const run = await api(`/dag-runs/wb-export/${runId}`);
      if (run.body?.status === 4) break;
      if (i > 100) throw new Error(`run did not succeed: ${JSON.stringify(run.body)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
    const [replicaA] = stack.processesOf('run-service');
    await stack.spawnApp('run-service', { LOG_LEVEL: 'info' });
    for (let i = 0; !stack.output().includes('bus worker started'); i++) {
      if (i > 100) throw new Error('replica B did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const exited = new Promise((resolve) => replicaA?.once('exit', resolve));
    replicaA?.kill('SIGKILL');
    await exited;
    const developer = await clientWithRole('developer');
    const path = `wb-export/${runId}/report.xlsx`;
    const result = await readWorkbook(developer, { path: `  ${path} ` });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Dagu read completed.' }]);
    const structured = result.structuredContent ?? {};
    expect(Object.keys(structured).sort()).toEqual(['data', 'path', 'references', 'target']);
    expect(structured).toMatchObject({ target: 'workbook', path });
    expect(structured.references).toEqual(
      expect.arrayContaining([
        'dagu://reference/authoring',
        'dagu://reference/tools',
        'dagu://reference/notifications',
      ]),
    );
    const data = structured.data as Record<string, unknown>;
    expect(data.path).toBe(join(workDir, path));
    expect(data.date_system).toBe('1900');
    const sheets = data.sheets as Array<Record<string, unknown>>;
    expect(sheets.map((s) => [s.name, s.hidden ?? false, s.range, s.header_row, s.row_count])).toEqual([
      ['Orders', false, 'Orders!B3:J11', 3, 7],
      ['Secret', true, 'Secret!A1:B3', 1, 2],
      ['Empty', false, '', 0, 0],
    ]);
    expect(sheets[0]?.hidden_rows).toBe(2);
    expect(sheets[1]?.tables).toEqual([{ name: 'Rates', range: 'Secret!A1:B3' }]);
    expect(data.named_ranges).toEqual([
      { name: 'OrderAmounts', refers_to: 'Orders!$D$4:$D$9', scope: 'workbook' },
      { name: 'RateCell', refers_to: 'Secret!$B$2', scope: 'workbook' },
    ]);
    expect(data.warnings).toContain('Orders!D7: error cell #N/A');
  }, 60_000);
});

describe('who may read: developer and up (workbook.md; dagu-model §9 reads stop short of server files)', () => {
  test.each(['viewer', 'operator'])('%s → unauthorized, before the path is even looked at', async (role) => {
    const client = await clientWithRole(role);
    for (const path of ['libreoffice-sales.xlsx', 'anything.csv']) {
      const result = await readWorkbook(client, { path });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ code: 'unauthorized', target: 'workbook' });
    }
  });

  test('developer and admin read the LibreOffice-saved workbook', async () => {
    for (const role of ['developer', 'admin']) {
      const result = await readWorkbook(await clientWithRole(role), { path: 'libreoffice-sales.xlsx' });
      expect(result.isError).toBeFalsy();
      const data = result.structuredContent?.data as Record<string, unknown>;
      expect(data.named_ranges).toEqual([
        { name: 'Units', refers_to: 'Sales!$D$2:$D$4', scope: 'workbook' },
        { name: 'LocalRate', refers_to: 'Lookup!$B$2', scope: 'Lookup' },
      ]);
      expect((data.sheets as Array<Record<string, unknown>>)[0]?.sample).toEqual([
        { Region: 'North', Product: '007', Product_2: 'Widget', Units: 10, Shipped: '2026-10-01', Total: 25, _row: 2 },
        { Region: 'South', Product: '008', Product_2: 'Gadget', Units: 4, Shipped: '2026-10-02', Total: 10, _row: 3 },
        { Region: 'North', Product: '009', Product_2: 'Gizmo', Units: 3, Shipped: '2026-10-03', Total: null, _row: 4 },
      ]);
    }
  });
});

describe('021 errors of the workbook target, as the client sees them', () => {
  let developer: Client;
  beforeAll(async () => {
    developer = await clientWithRole('developer');
  });

  test.each([
    [
      { path: 'report.csv' },
      'invalid_tool_input',
      'path',
      'only .xlsx and .xlsm workbooks are supported; save as .xlsx',
    ],
    [{ path: 'gone/missing.xlsx' }, 'resource_not_found', undefined, 'missing.xlsx: workbook not found'],
    [
      { path: 'notes.xlsx' },
      'resource_unavailable',
      undefined,
      'notes.xlsx: not a workbook (the file cannot be read as .xlsx)',
    ],
    [
      { path: 'protected.xlsx' },
      'invalid_tool_input',
      'password',
      'protected.xlsx: workbook password is missing or incorrect',
    ],
    [
      { path: 'protected.xlsx', password: PASSWORD.trim() },
      'invalid_tool_input',
      'password',
      'protected.xlsx: workbook password is missing or incorrect',
    ],
    [{ path: 'a.xlsx', name: 'x' }, 'invalid_tool_input', 'name', 'The name field is not allowed for target workbook.'],
  ])('%j → %s', async (args, code, field, message) => {
    const result = await readWorkbook(developer, args);
    expect(result.isError).toBe(true);
    // dagu-model §10: resource_unavailable carries the request id the logs carry.
    expect(result.structuredContent).toEqual({
      code,
      message,
      target: 'workbook',
      ...(field !== undefined ? { field } : {}),
      ...(code === 'resource_unavailable' ? { details: { requestId: expect.any(String) as unknown } } : {}),
    });
    expect(result.content).toEqual([{ type: 'text', text: message }]);
  });

  test('a one-column sheet: its first text row is the header (workbook.md "Finding the table of a sheet")', async () => {
    const result = await readWorkbook(developer, { path: 'one-column.xlsx' });
    expect(result.isError).toBeFalsy();
    const sheet = (result.structuredContent?.data as { sheets: Array<Record<string, unknown>> }).sheets[0];
    expect(sheet).toMatchObject({
      name: 'List',
      range: 'List!A1:A5002',
      header_row: 1,
      headers: ['n'],
      row_count: 5001,
    });
    expect(sheet?.types).toEqual({ n: 'integer' });
    expect(sheet?.sample).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, _row: n + 1 })));
  });

  test('a file over RUN_WORKBOOK_MAX_BYTES is resource_unavailable with a clear message', async () => {
    expect(statSync(join(workDir, 'big.xlsx')).size).toBeGreaterThan(MAX_BYTES);
    const result = await readWorkbook(developer, { path: join(workDir, 'big.xlsx') });
    expect(result.structuredContent).toMatchObject({ code: 'resource_unavailable' });
    expect(String(result.structuredContent?.message)).toMatch(
      /^big\.xlsx: the workbook is [\d.]+ KiB, over the 97\.7 KiB limit of this server \(RUN_WORKBOOK_MAX_BYTES\)$/,
    );
  });

  test('the right password (spaces kept) opens the protected workbook', async () => {
    const result = await readWorkbook(developer, { path: 'protected.xlsx', password: PASSWORD });
    expect(result.isError).toBeFalsy();
    const data = result.structuredContent?.data as Record<string, unknown>;
    expect((data.sheets as Array<Record<string, unknown>>)[0]?.sample).toEqual([{ k: 'answer', v: 42, _row: 2 }]);
  });
});

describe('the password is never kept (021: not recorded in the audit log; issue 20: no Redis key outlives the call)', () => {
  test('after reads that succeeded, were refused and failed, no Redis key, audit row or log line holds it', async () => {
    const developer = await clientWithRole('developer');
    // A failed job (resource_unavailable) that carried the password: BullMQ would keep it in its failed set.
    const failed = await readWorkbook(developer, { path: 'notes.xlsx', password: PASSWORD });
    expect(failed.structuredContent).toMatchObject({ code: 'resource_unavailable' });
    const wrong = await readWorkbook(developer, { path: 'protected.xlsx', password: `${PASSWORD}x` });
    expect(wrong.structuredContent).toMatchObject({ code: 'invalid_tool_input', field: 'password' });
    const ok = await readWorkbook(developer, { path: 'protected.xlsx', password: PASSWORD });
    expect(ok.isError).toBeFalsy();
    const denied = await readWorkbook(await clientWithRole('viewer'), { path: 'protected.xlsx', password: PASSWORD });
    expect(denied.structuredContent).toMatchObject({ code: 'unauthorized' });

    const dump = await dumpRedis();
    expect(dump.keys).toBeGreaterThan(0);
    expect(dump.text.includes(PASSWORD.trim())).toBe(false);

    const rows = await auditRows();
    expect(rows.map((r) => r.details.workbook_path)).toEqual(expect.arrayContaining(['notes.xlsx', 'protected.xlsx']));
    expect(new Set(rows.map((r) => r.action))).toEqual(
      // The refused read is also an `authz.denied` row (docs/security.md "Attribution").
      new Set([
        'mcp.tool_call.received',
        'mcp.tool_call.succeeded',
        'mcp.tool_call.failed',
        'mcp.tool_call.denied',
        'authz.denied',
      ]),
    );
    expect(JSON.stringify(rows).includes(PASSWORD.trim())).toBe(false);
    expect(stack.output().includes(PASSWORD.trim())).toBe(false);
  });
});

/** Every key and value in Redis (all prefixes: the password is unique to this run), as one text. */
async function dumpRedis(): Promise<{ keys: number; text: string }> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const parts: string[] = [];
  let ours = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        if (key.startsWith(`e2e-${stack.id}:`)) ours += 1;
        parts.push(key, await valueOf(redis, key));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { keys: ours, text: parts.join('\n') };
}

async function valueOf(redis: Redis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}

/** The gateway's audit rows of workbook reads (written in batches every 200 ms: read after 600 ms). */
async function auditRows(): Promise<Array<{ action: string; details: Record<string, unknown> }>> {
  const pool = new Pool({ connectionString: TEST_DATABASE_URL });
  try {
    const schema = stack.schemaOf('mcp-gateway');
    await new Promise((r) => setTimeout(r, 600));
    const { rows } = await pool.query<{ action: string; details: Record<string, unknown> }>(
      `SELECT action, details FROM "${schema}".audit_events WHERE target LIKE 'dagu_read:workbook%' ORDER BY at`,
    );
    return rows;
  } finally {
    await pool.end();
  }
}
