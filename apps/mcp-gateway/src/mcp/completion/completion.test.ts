import { BusClient, type CallOptions } from '@dagu-mcp/bus';
import {
  ANONYMOUS_PRINCIPAL,
  DaguError,
  type OpCatalog,
  type OpReply,
  type OpRequest,
  type ServiceName,
} from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { createCompletionSource, rank } from './completion';

/** A bus whose replies come from a table of op → reply (no Redis). */
class TableBus extends BusClient {
  readonly calls: Array<{ op: string; payload: unknown }> = [];
  constructor(private readonly replies: Record<string, unknown>) {
    super({ redisUrl: 'redis://unused' });
  }
  override async call<C extends OpCatalog, K extends keyof C & string>(
    _s: ServiceName,
    catalog: C,
    op: K,
    payload: OpRequest<C, K>,
    _o: CallOptions,
  ): Promise<OpReply<C, K>> {
    this.calls.push({ op, payload });
    if (!(op in this.replies)) throw new DaguError('resource_unavailable', 'down');
    const definition: C[K] = catalog[op];
    const reply: C[K]['reply'] = definition.reply;
    return z.parse(reply, this.replies[op]);
  }
}

const logger = createLogger({ name: 'test', level: 'silent' });
const dag = (name: string) => ({
  name,
  uri: `dagu://dags/${name}/spec`,
  suspended: false,
  labels: [],
  schedule: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
});
const page = { page: 1, perPage: 200, total: 3, totalPages: 1 };

test('rank: prefix matches first, then substring matches, case-insensitive, capped at 100', () => {
  expect(rank(['nightly-report', 'report', 'Reporting', 'other'], 'rep')).toEqual({
    values: ['Reporting', 'report', 'nightly-report'],
    total: 3,
    hasMore: false,
  });
  const many = Array.from({ length: 150 }, (_, i) => `dag-${String(i).padStart(3, '0')}`);
  expect(rank(many, 'dag')).toMatchObject({ total: 150, hasMore: true, values: expect.arrayContaining(['dag-000']) });
  expect(rank(many, 'dag').values).toHaveLength(100);
});

test('DAG names, run ids, workspaces, page paths and topics come from the services with the caller principal', async () => {
  const bus = new TableBus({
    'dag.list': { items: [dag('nightly'), dag('night-owl'), dag('daily')], pagination: page },
    'run.list': { items: [{ name: 'nightly', dagRunId: 'r-2', uri: 'u', status: 2, statusLabel: 'failed' }] },
    'wiki.list': { items: [], pagination: page, flat: true, sort: 'name', order: 'asc' },
  });
  const complete = createCompletionSource({
    bus,
    topics: new Map([
      ['authoring', {}],
      ['tools', {}],
    ]),
    logger,
  });
  const asPrompt = (argument: string, value: string, context?: Record<string, string>) =>
    complete(
      {
        ref: { type: 'ref/prompt', name: 'dagu_debug_failed_run' },
        argument: { name: argument, value },
        ...(context ? { context: { arguments: context } } : {}),
      },
      ANONYMOUS_PRINCIPAL,
    );
  expect((await asPrompt('name', 'nig')).values).toEqual(['night-owl', 'nightly']);
  expect(bus.calls[0]).toEqual({ op: 'dag.list', payload: { perPage: 200, name: 'nig' } });
  expect((await asPrompt('dagRunId', '', { name: 'nightly' })).values).toEqual(['r-2']);
  expect((await asPrompt('dagRunId', '')).values).toEqual([]);
  expect((await asPrompt('workspace', '')).values).toEqual([]);
  expect((await asPrompt('goal', 'x')).values).toEqual([]);
  const topic = await complete(
    { ref: { type: 'ref/resource', uri: 'dagu://reference/{topic}' }, argument: { name: 'topic', value: 'to' } },
    ANONYMOUS_PRINCIPAL,
  );
  expect(topic.values).toEqual(['tools']);
});

test('a failing service gives no values, never an error', async () => {
  const complete = createCompletionSource({ bus: new TableBus({}), topics: new Map(), logger });
  await expect(
    complete(
      { ref: { type: 'ref/prompt', name: 'dagu_edit_dag' }, argument: { name: 'name', value: 'x' } },
      ANONYMOUS_PRINCIPAL,
    ),
  ).resolves.toEqual({
    values: [],
    total: 0,
    hasMore: false,
  });
});
