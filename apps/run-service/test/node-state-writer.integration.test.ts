import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { type Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { nodesOfDag } from '../src/core/dag-nodes';
import type { NodeSpec, NodeState } from '../src/core/run-types';
import { NodeStateWriter, type WrittenStep } from '../src/store/node-state-writer';
import { insertRun } from '../src/store/run.repository';
import { migratedTestPool } from '../test-fixtures/run-test-env';

/**
 * Step states written at most every `RUN_STATE_WRITE_MS` (issue 28;
 * docs/decisions.md "Step states written at most every 20 ms"), against real
 * PostgreSQL: a save after a quiet spell is written at once, saves within the
 * interval go in one later write with each step's newest state, and a flush
 * (what the engine awaits before a run-status change) never waits for the
 * interval.
 */
let pool: Pool;
let runPk: number;
let nodes: NodeSpec[];

let drop: () => Promise<void>;

beforeAll(async () => {
  ({ pool, drop } = await migratedTestPool('states'));
  const spec = 'type: chain\nsteps:\n  - {name: a, run: "true"}\n  - {name: b, run: "true"}\n';
  const parsed = parseDagSpec(spec, { name: 'spaced' });
  if (parsed.dag === undefined) throw new Error(parsed.errors.join('; '));
  nodes = nodesOfDag(parsed.dag).all;
  ({ pk: runPk } = await insertRun(pool, {
    dagName: 'spaced',
    dagRunId: 'r1',
    attemptId: 'r1-a1',
    status: 1,
    params: '',
    mergedParams: [],
    labels: [],
    queue: 'default',
    maxActiveRuns: 1,
    inline: true,
    spec,
    normalized: parsed.dag,
    nodes,
    requestId: 'req-r1',
    owner: 'replica-a',
  }));
});
afterAll(() => drop());

function stateOf(status: 1 | 4): NodeState {
  return { status, retryCount: 0, allowedFailure: false, outputs: {}, stdoutLog: 0, stderrLog: 0 };
}

async function storedStatuses(): Promise<Record<string, number>> {
  const result = await pool.query('SELECT name, status FROM run_steps WHERE run_pk = $1 ORDER BY seq', [runPk]);
  const rows = z.array(z.object({ name: z.string(), status: z.number() })).parse(result.rows);
  return Object.fromEntries(rows.map((row) => [row.name, row.status]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('saves within the interval go in one write with the newest states; a flush does not wait', async () => {
  const writes: WrittenStep[][] = [];
  const writer = new NodeStateWriter(pool, runPk, 1, undefined, 60_000, (rows) => writes.push([...rows]), 400);
  const [a, b] = nodes;
  if (a === undefined || b === undefined) throw new Error('two nodes expected');

  // After a quiet spell: written at once.
  writer.save(a, stateOf(1));
  await sleep(150);
  expect(writes.map((w) => w.map((row) => `${row.name}:${row.status}`))).toEqual([['a:1']]);
  expect(await storedStatuses()).toEqual({ a: 1, b: 0 });

  // Within the interval: held, then one write with a's newest state and b's.
  writer.save(a, stateOf(4));
  writer.save(b, stateOf(1));
  await sleep(100);
  expect(writes).toHaveLength(1);
  const held = performance.now();
  expect(await storedStatuses()).toEqual({ a: 1, b: 0 });
  while (writes.length < 2) await sleep(5);
  // The held write came when the interval after the first ended (≈ 400 ms after it), not before.
  expect(performance.now() - held).toBeGreaterThan(100);
  expect(writes.map((w) => w.map((row) => `${row.name}:${row.status}`).sort())).toEqual([['a:1'], ['a:4', 'b:1']]);
  expect(await storedStatuses()).toEqual({ a: 4, b: 1 });

  // Right after a write (the interval has ~400 ms to go), a flush writes at once.
  writer.save(b, stateOf(4));
  const started = performance.now();
  await writer.flush();
  expect(performance.now() - started).toBeLessThan(250);
  expect(await storedStatuses()).toEqual({ a: 4, b: 4 });
  expect(writes).toHaveLength(3);
});
