import { randomBytes } from 'node:crypto';
import type { Principal } from '@dagu-mcp/contracts';
import { createLogger, createPool, migrate, type Pool } from '@dagu-mcp/runtime';
import { AGENT_MIGRATIONS } from '../db/migrations';
import { daguErrorOf } from '../../../../packages/contracts/test-fixtures/dagu-error-of';
import { createAgent, deleteAgent, getAgent, listAgents, setAgentTools, updateAgent } from './agent-store';

/**
 * The agent store against the real PostgreSQL (CONTRIBUTING §10): one random
 * schema, migrated as the service does on start.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `agent_store_${randomBytes(4).toString('hex')}`;
let pool: Pool;

const as = (id: string, subject: string, role: Principal['role']): Principal => ({
  id,
  subject,
  role,
  credentialType: 'token',
});
const ALICE = as('user:a', 'alice', 'manager');
const BOB = as('user:b', 'bob', 'admin');
const DEV = as('user:d', 'dev', 'developer');
let job = 0;
const ctx = (principal: Principal) => ({ principal, deadline: Date.now() + 5000, jobId: `job-${++job}` });
const ref = { workspace: 'support', slug: 'helpdesk' };

beforeAll(async () => {
  pool = createPool({ url: DATABASE_URL, schema, max: 4, logger: createLogger({ name: 't', level: 'silent' }) });
  await migrate(pool, schema, AGENT_MIGRATIONS);
});

afterAll(async () => {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

test('create, conflict on the slug, and manager-only writes', async () => {
  const agent = await createAgent(pool, { ...ref, title: 'Helpdesk', description: '', state: 'draft' }, ctx(ALICE));
  expect(agent).toMatchObject({ ...ref, state: 'draft', version: 1, toolCount: 0, createdBy: 'alice' });
  expect(
    (await daguErrorOf(createAgent(pool, { ...ref, title: 'x', description: '', state: 'draft' }, ctx(ALICE)))).field,
  ).toBe('slug');
  expect((await daguErrorOf(updateAgent(pool, { ...ref, state: 'published' }, ctx(DEV)))).code).toBe('unauthorized');
  const updated = await updateAgent(pool, { ...ref, state: 'published' }, ctx(ALICE));
  expect(updated).toMatchObject({ state: 'published', title: 'Helpdesk', version: 2 });
  expect((await listAgents(pool, 'support')).map((a) => a.slug)).toEqual(['helpdesk']);
  expect(await listAgents(pool, 'elsewhere')).toEqual([]);
});

test('a re-saved catalog keeps the author of unchanged bindings; the change is recorded', async () => {
  const read = { kind: 'dagu_tool' as const, tool: 'dagu_read' as const, restrictions: { targets: ['dag'] } };
  const refund = { kind: 'dag' as const, dag: 'refund' };
  await setAgentTools(pool, { ...ref, tools: [read] }, ctx(ALICE));
  const saved = await setAgentTools(pool, { ...ref, tools: [read, refund] }, ctx(BOB));
  expect(saved.tools.map((t) => [t.toolName, t.createdBy.subject])).toEqual([
    ['dagu_read', 'alice'],
    ['refund', 'bob'],
  ]);
  expect((await getAgent(pool, ref)).tools).toHaveLength(2);
  const { rows } = await pool.query<{ action: string }>(
    `SELECT action FROM mutation_log WHERE target = 'agent:support/helpdesk' ORDER BY id`,
  );
  expect(rows.map((r) => r.action)).toEqual(['agent.created', 'agent.updated', 'agent.tools_set', 'agent.tools_set']);
});

test('delete, then the agent is unknown', async () => {
  expect((await deleteAgent(pool, ref, ctx(ALICE))).deleted).toBe(true);
  expect((await daguErrorOf(getAgent(pool, ref))).code).toBe('resource_not_found');
  expect((await daguErrorOf(deleteAgent(pool, ref, ctx(ALICE)))).code).toBe('resource_not_found');
});
