import { randomBytes } from 'node:crypto';
import type { Principal } from '@dagu-mcp/contracts';
import {
  createLogger,
  createPool,
  generateKeyText,
  migrate,
  parseKeyRing,
  SecretBox,
  type Pool,
} from '@dagu-mcp/runtime';
import { AGENT_MIGRATIONS } from '../db/migrations';
import { operationTool } from './operation-call';
import {
  createOperation,
  getOperation,
  newOperationVersion,
  publishOperationVersion,
  updateOperation,
} from './operation-store';
import { daguErrorOf } from '../../../../packages/contracts/test-fixtures/dagu-error-of';
import { deleteUpstream, getUpstream, loadUpstreamForCall, putUpstream } from './upstream-store';

/**
 * Upstreams and operations against the real PostgreSQL (CONTRIBUTING §10): one random schema,
 * migrated as agent-service does on start.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `rest_store_${randomBytes(4).toString('hex')}`;
let pool: Pool;
const box = new SecretBox(parseKeyRing(generateKeyText()));
const secrets = () => box;

const MANAGER: Principal = { id: 'user:m', subject: 'mia', role: 'manager', credentialType: 'token' };
const OPERATOR: Principal = { id: 'user:o', subject: 'otto', role: 'operator', credentialType: 'token' };
let job = 0;
const ctx = (principal: Principal = MANAGER) => ({ principal, deadline: Date.now() + 5000, jobId: `job-${++job}` });
const ws = 'billing';
const SECRET = 'tok-3b1f';

const spec = (pathTemplate: string) => ({
  upstream: 'api',
  method: 'GET',
  pathTemplate,
  inputSchema: { type: 'object', properties: {} },
});

beforeAll(async () => {
  pool = createPool({ url: DATABASE_URL, schema, max: 4, logger: createLogger({ name: 't', level: 'silent' }) });
  await migrate(pool, schema, AGENT_MIGRATIONS);
});

afterAll(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

test('an upstream credential is stored sealed, never read back, and opened only for a call', async () => {
  const put = { workspace: ws, name: 'api', baseUrl: 'https://api.example.com/v1' };
  const created = await putUpstream(pool, secrets, { ...put, credential: { type: 'bearer', token: SECRET } }, ctx());
  expect(created).toMatchObject({ created: true, credential: { type: 'bearer' }, allowHosts: ['api.example.com'] });
  expect(JSON.stringify(await getUpstream(pool, put))).not.toContain(SECRET);
  const { rows } = await pool.query<{ credential: string }>('SELECT credential FROM upstreams');
  expect(rows[0]?.credential).toMatch(/^dsec1\./);
  expect(rows[0]?.credential).not.toContain(SECRET);
  // A replace without a credential keeps it; the audit record never has it.
  expect(await putUpstream(pool, secrets, { ...put, timeoutMs: 2000 }, ctx())).toMatchObject({
    created: false,
    version: 2,
    credential: { type: 'bearer' },
  });
  expect((await loadUpstreamForCall(pool, secrets, put)).credential).toEqual({ type: 'bearer', token: SECRET });
  const audit = await pool.query(`SELECT 1 FROM mutation_log WHERE details::text LIKE $1`, [`%${SECRET}%`]);
  expect(audit.rowCount).toBe(0);
  // Refusals: below manager, an allow-list that misses the base URL's host.
  expect((await daguErrorOf(putUpstream(pool, secrets, put, ctx(OPERATOR)))).code).toBe('unauthorized');
  expect(
    (await daguErrorOf(putUpstream(pool, secrets, { ...put, allowHosts: ['other.example.com'] }, ctx()))).field,
  ).toBe('allowHosts');
});

test('an IP-literal base URL is never its own allow-list entry, in any spelling', async () => {
  for (const [name, baseUrl] of [
    ['ip-loopback', 'http://127.0.0.1:28080'],
    ['ip-decimal', 'http://2130706433:28080'],
    ['ip-hex', 'http://0x7f000001:28080'],
    ['ip-short', 'http://127.1:28080'],
    ['ip-mapped', 'http://[::ffff:127.0.0.1]:28080'],
    ['ip-unspecified', 'http://0.0.0.0:28080'],
    ['ip-metadata', 'http://169.254.169.254'],
  ] as const) {
    const saved = await putUpstream(pool, secrets, { workspace: ws, name, baseUrl }, ctx());
    expect([name, saved.allowHosts]).toEqual([name, []]);
    expect((await loadUpstreamForCall(pool, secrets, { workspace: ws, name })).allowHosts).toEqual([]);
  }
  // Given entries are kept as given (they narrow where calls go; they open no internal address).
  const given = await putUpstream(
    pool,
    secrets,
    { workspace: ws, name: 'ip-given', baseUrl: 'http://10.0.0.1', allowHosts: ['10.0.0.0/8'] },
    ctx(),
  );
  expect(given.allowHosts).toEqual(['10.0.0.0/8']);
});

test('versions: draft, publish, a new draft, immutable published versions; drafts are invisible', async () => {
  const ref = { workspace: ws, name: 'get_refund' };
  const created = await createOperation(pool, { ...ref, spec: spec('/refunds/{id}') }, ctx()).catch((e: unknown) => e);
  // A path placeholder without its argument is a spec error naming the field.
  expect(created).toMatchObject({ code: 'invalid_request', field: 'spec.pathTemplate' });
  await createOperation(pool, { ...ref, title: 'Get a refund', spec: spec('/refunds') }, ctx());
  expect((await daguErrorOf(operationTool(pool, { ...ref, version: 'latest' }))).code).toBe('resource_not_found');
  const published = await publishOperationVersion(pool, { ...ref, version: 1 }, ctx());
  expect(published).toMatchObject({ publishedVersion: 1, latestVersion: 1, boundAgents: [] });
  expect((await daguErrorOf(updateOperation(pool, { ...ref, spec: spec('/x') }, ctx()))).field).toBe('spec');
  await newOperationVersion(pool, { ...ref, spec: spec('/refunds/all') }, ctx());
  expect((await daguErrorOf(newOperationVersion(pool, ref, ctx()))).field).toBe('version');
  expect(await operationTool(pool, { ...ref, version: 'latest' })).toMatchObject({ version: 1, title: 'Get a refund' });
  await publishOperationVersion(pool, { ...ref, version: 2 }, ctx());
  expect(await operationTool(pool, { ...ref, version: 'latest' })).toMatchObject({ version: 2 });
  expect((await getOperation(pool, ref)).versions.map((v) => [v.version, v.state])).toEqual([
    [2, 'published'],
    [1, 'published'],
  ]);
  // An upstream an operation uses cannot be deleted.
  expect((await daguErrorOf(deleteUpstream(pool, { workspace: ws, name: 'api' }, ctx()))).code).toBe('conflict');
});
