#!/usr/bin/env node
/**
 * Where the one-connection latency (scenario S2) goes: the stack's answer
 * times at 1 connection, layer by layer, measured in one run.
 *
 *   node bench/s2-breakdown.mjs [--n 1000] [--rounds 3]     (npm run bench:s2; needs a built tree)
 *
 * Starts the stack as the bench does (bench/lib/stack.mjs), stores one DAG,
 * then times, one request at a time over one keep-alive connection, in
 * interleaved rounds (the first 10 % of each round untimed):
 *  - `healthz`: `GET /healthz` — Express and HTTP alone;
 *  - `mcp ping`: JSON-RPC `ping` — plus API-key auth, session check, MCP dispatch;
 *  - `tool, no bus`: `dagu_read {target: reference}` — plus the tool path, answered by the gateway;
 *  - `tool over bus`: `dagu_read {target: dag_spec}` — plus one bus call to dag-service (S2's call);
 *  - `bus from a lean process`: the same `dag.spec` call made by a `BusClient` in this process.
 * Prints p50 and p90 of each in ms, and the steps between them.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { dagName, seedDags } from './lib/dags.mjs';
import { keepAliveAgent, mcpHeaders, openSession, request, rpcBody } from './lib/mcp-http.mjs';
import { createApiKey, startStack } from './lib/stack.mjs';
import { quantile } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
const { BusClient } = require('../packages/bus/dist/index.js');
const { OP_CATALOGS } = require('../packages/contracts/dist/index.js');

const { values: argv } = parseArgs({ options: { n: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' } } });
const perRound = Number(argv.n);
const rounds = Number(argv.rounds);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const stack = await startStack({ databaseUrl, redisUrl });
const bus = new BusClient({ redisUrl, prefix: `bench-${stack.id}` });
const agent = keepAliveAgent(1);
try {
  const token = await createApiKey(stack);
  const session = await openSession(stack.mcpUrl, { token, agent });
  await seedDags(stack.mcpUrl, session, token, 0, 1);
  await bus.start();
  const headers = mcpHeaders({ token, ...session });
  const toolCall = (id, args) => request(stack.mcpUrl, { headers, agent, body: rpcBody(id, 'tools/call', { name: 'dagu_read', arguments: args }) });
  const principal = { id: 'bench', subject: 'bench', role: 'admin', credentialType: 'none' };
  const layers = [
    ['healthz', () => request(`${stack.baseUrl}/healthz`, { method: 'GET', agent })],
    ['mcp ping', (id) => request(stack.mcpUrl, { headers, agent, body: rpcBody(id, 'ping', {}) })],
    ['tool, no bus', (id) => toolCall(id, { target: 'reference', name: 'tools' })],
    ['tool over bus', (id) => toolCall(id, { target: 'dag_spec', name: dagName(0) })],
    ['bus from a lean process', () => bus.call('dag', OP_CATALOGS.dag, 'dag.spec', { name: dagName(0) }, { principal })],
  ];
  for (const [name, send] of layers.slice(1, 4)) {
    const answer = await send(1);
    if (answer.status !== 200 || !answer.text.includes('"result"') || answer.text.includes('"isError":true')) {
      throw new Error(`${name}: unexpected answer ${answer.status} ${answer.text.slice(0, 200)}`);
    }
  }
  const samples = new Map(layers.map(([name]) => [name, []]));
  let id = 10;
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, send] of layers) {
      for (let i = 0; i < perRound; i += 1) {
        const started = performance.now();
        await send(id++);
        if (i >= perRound / 10) samples.get(name).push(performance.now() - started);
      }
    }
  }
  const p50 = new Map([...samples].map(([name, s]) => [name, quantile(s, 0.5)]));
  console.log(`${rounds} rounds × ${perRound} requests per layer, 1 connection (ms)`);
  for (const [name, s] of samples) console.log(`${name.padEnd(24)} p50 ${p50.get(name).toFixed(3)}  p90 ${quantile(s, 0.9).toFixed(3)}`);
  const step = (a, b) => (p50.get(b) - p50.get(a)).toFixed(3);
  console.log(`auth + session + MCP dispatch (mcp ping − healthz):      ${step('healthz', 'mcp ping')}`);
  console.log(`tool path (tool, no bus − mcp ping):                      ${step('mcp ping', 'tool, no bus')}`);
  console.log(`bus call and result inside the gateway (over bus − no bus): ${step('tool, no bus', 'tool over bus')}`);
} finally {
  agent.destroy();
  await bus.close();
  await stack.stop();
}
