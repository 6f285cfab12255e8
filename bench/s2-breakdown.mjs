#!/usr/bin/env node
/**
 * Where the one-connection latency (scenario S2) goes: answer times at
 * 1 connection, layer by layer, measured in one run.
 *
 *   npm run bench:s2 [-- --n 1000 --rounds 3]
 *   (installs and builds first; Redis and PostgreSQL must answer, as for `npm run bench`)
 *
 * Starts the stack as the bench does (bench/lib/stack.mjs), stores one DAG,
 * starts the baseline server (bench/lib/baseline-server.mjs) with that DAG's
 * answer, then times, one request at a time over one keep-alive connection per
 * server, in interleaved rounds (the first 10 % of each round untimed):
 *  - `baseline`: the plain SDK server answering the same `dagu_read dag_spec` (S2's reference);
 *  - `healthz`: `GET /healthz` of the gateway — Express and HTTP alone;
 *  - `mcp ping`: JSON-RPC `ping` — plus API-key auth, session check, MCP dispatch;
 *  - `tool, no bus`: `dagu_read {target: reference}` — plus the tool path, answered by the gateway;
 *  - `tool over bus`: `dagu_read {target: dag_spec}` — plus one bus call to dag-service (S2's call);
 *  - `tool over bus, 2026-07-28`: the same call in the stateless revision (no session, the
 *    envelope in `_meta`, the routing headers): S2's second figure;
 *  - `bus from a lean process`: the same `dag.spec` bus call made by a `BusClient` in this process.
 * Every answer is checked (HTTP 200 and a JSON-RPC result that is not a tool
 * error); the run fails on the first wrong one. Prints p50 and p90 of each in
 * ms, and the steps between layers.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BusClient } from '@dagu-mcp/bus';
import { OP_CATALOGS } from '@dagu-mcp/contracts';
import { dagName, seedDags } from './lib/dags.mjs';
import {
  keepAliveAgent,
  mcpHeaders,
  MODERN_META,
  MODERN_VERSION,
  openSession,
  request,
  responseTo,
  rpcBody,
} from './lib/mcp-http.mjs';
import { createApiKey, startBaseline, startStack } from './lib/stack.mjs';
import { quantile } from './lib/stats.mjs';

const { values: argv } = parseArgs({
  options: { n: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' } },
});
const perRound = Number(argv.n);
const rounds = Number(argv.rounds);
const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Throws unless `answer` is HTTP 200 with a JSON-RPC result (not a tool error) for `id`; `id` undefined: any 200. */
function check(layer, answer, id) {
  const message = id === undefined ? undefined : responseTo(answer, id);
  const ok =
    answer.status === 200 && (id === undefined || (message?.result !== undefined && message.result.isError !== true));
  if (!ok) throw new Error(`${layer}: unexpected answer HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
}

const stack = await startStack({ databaseUrl, redisUrl });
const bus = new BusClient({ redisUrl, prefix: `bench-${stack.id}` });
const agent = keepAliveAgent(1);
const baselineAgent = keepAliveAgent(1);
let baseline;
try {
  const token = await createApiKey(stack);
  const session = await openSession(stack.mcpUrl, { token, agent });
  await seedDags(stack.mcpUrl, session, token, 0, 1);
  await bus.start();
  const headers = mcpHeaders({ token, ...session });
  const readBody = (id, args) => rpcBody(id, 'tools/call', { name: 'dagu_read', arguments: args });
  const spec = { target: 'dag_spec', name: dagName(0) };
  const first = await request(stack.mcpUrl, { headers, agent, body: readBody(1, spec) });
  check('tool over bus', first, 1);
  baseline = await startBaseline({ [dagName(0)]: responseTo(first, 1).result }, join(tmpdir(), 'dagu-mcp-bench'));
  const principal = { id: 'bench', subject: 'bench', role: 'admin', credentialType: 'none' };
  // Each layer: [name, send(id) → answer, check(answer, id)]; the check runs after the clock stops.
  const mcp = (url, hdrs, via, body) => (id) => request(url, { headers: hdrs, agent: via, body: body(id) });
  const layers = [
    ['baseline', mcp(baseline.url, mcpHeaders({}), baselineAgent, (id) => readBody(id, spec)), check],
    [
      'healthz',
      () => request(`${stack.baseUrl}/healthz`, { method: 'GET', agent }),
      (layer, answer) => check(layer, answer, undefined),
    ],
    ['mcp ping', mcp(stack.mcpUrl, headers, agent, (id) => rpcBody(id, 'ping', {})), check],
    [
      'tool, no bus',
      mcp(stack.mcpUrl, headers, agent, (id) => readBody(id, { target: 'reference', name: 'tools' })),
      check,
    ],
    ['tool over bus', mcp(stack.mcpUrl, headers, agent, (id) => readBody(id, spec)), check],
    [
      'tool over bus, 2026-07-28',
      mcp(
        stack.mcpUrl,
        {
          ...mcpHeaders({ token, protocolVersion: MODERN_VERSION }),
          'mcp-method': 'tools/call',
          'mcp-name': 'dagu_read',
          'mcp-param-name': spec.name,
        },
        agent,
        (id) => rpcBody(id, 'tools/call', { name: 'dagu_read', arguments: spec, _meta: MODERN_META }),
      ),
      check,
    ],
    [
      'bus from a lean process',
      () => bus.call('dag', OP_CATALOGS.dag, 'dag.spec', { name: dagName(0) }, { principal }),
      (layer, reply) => {
        if (reply?.name !== dagName(0))
          throw new Error(`${layer}: unexpected reply ${JSON.stringify(reply).slice(0, 200)}`);
      },
    ],
  ];
  const samples = new Map(layers.map(([name]) => [name, []]));
  let id = 10;
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, send, verify] of layers) {
      for (let i = 0; i < perRound; i += 1) {
        id += 1;
        const started = performance.now();
        const answer = await send(id);
        const ms = performance.now() - started;
        verify(name, answer, id);
        if (i >= perRound / 10) samples.get(name).push(ms);
      }
    }
  }
  const p50 = new Map([...samples].map(([name, s]) => [name, quantile(s, 0.5)]));
  console.log(`${rounds} rounds × ${perRound} requests per layer, 1 connection (ms)`);
  for (const [name, s] of samples)
    console.log(`${name.padEnd(24)} p50 ${p50.get(name).toFixed(3)}  p90 ${quantile(s, 0.9).toFixed(3)}`);
  const step = (a, b) => (p50.get(b) - p50.get(a)).toFixed(3).padStart(7);
  console.log(`S2 added p50 (tool over bus − baseline):                  ${step('baseline', 'tool over bus')}`);
  console.log(`auth + session + MCP dispatch (mcp ping − healthz):       ${step('healthz', 'mcp ping')}`);
  console.log(`tool path (tool, no bus − mcp ping):                      ${step('mcp ping', 'tool, no bus')}`);
  console.log(`bus call and its result in the gateway (over − no bus):   ${step('tool, no bus', 'tool over bus')}`);
  console.log(
    `S2 added p50, 2026-07-28 (stateless − baseline):          ${step('baseline', 'tool over bus, 2026-07-28')}`,
  );
  console.log(
    `the stateless revision's own cost (stateless − session):  ${step('tool over bus', 'tool over bus, 2026-07-28')}`,
  );
} finally {
  agent.destroy();
  baselineAgent.destroy();
  await bus.close().catch(() => undefined);
  await baseline?.stop().catch(() => undefined);
  await stack.stop();
}
