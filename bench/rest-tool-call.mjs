/**
 * Benchmark (issue 25): what a REST operation costs as a tool. Not a test (CONTRIBUTING
 * "Tests": speed is shown by benchmarks):
 *
 *   bash scripts/build.sh && node bench/rest-tool-call.mjs [--calls 200]
 *
 * Starts the built stack (bench/lib/stack.mjs) and a local upstream HTTP server answering a
 * small JSON document, publishes one GET operation on it and binds it to an agent, then makes
 * `calls` sequential `tools/call`s with the MCP SDK client on the agent endpoint (after 20 to
 * warm up), and as many plain `fetch`es of the same upstream URL. Prints both latency
 * summaries (ms) and the difference of the medians — the path gateway → bus → agent-service
 * (input check, upstream and credential lookups, the SSRF guard) → upstream and back — as JSON.
 */
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ADMIN, rest, startStack } from './lib/stack.mjs';
import { summarize } from './lib/stats.mjs';

const calls = Number(process.argv[process.argv.indexOf('--calls') + 1] || 200);
const WS = 'bench';

const upstream = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: req.url, status: 'refunded', amount: 25 }));
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;

const stack = await startStack({
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
});
let client;
try {
  const token = (await rest(stack, '/auth/login', { method: 'POST', body: ADMIN })).body.token;
  const must = async (path, init, status) => {
    const res = await rest(stack, path, { token, ...init });
    if (res.status !== status) throw new Error(`${init.method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  await must(
    `/workspaces/${WS}/upstreams/api`,
    {
      method: 'PUT',
      body: { baseUrl: upstreamUrl, credential: { type: 'bearer', token: 'bench-secret' } },
    },
    201,
  );
  await must(
    `/workspaces/${WS}/operations`,
    {
      method: 'POST',
      body: {
        name: 'get_refund',
        spec: {
          upstream: 'api',
          method: 'GET',
          pathTemplate: '/refunds/{id}',
          arguments: { id: { in: 'path' } },
          inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        },
      },
    },
    201,
  );
  await must(`/workspaces/${WS}/operations/get_refund/versions/1/publish`, { method: 'POST' }, 200);
  await must(`/workspaces/${WS}/agents`, { method: 'POST', body: { slug: 'bot', title: 'Bench' } }, 201);
  await must(
    `/workspaces/${WS}/agents/bot/tools`,
    {
      method: 'PUT',
      body: { tools: [{ kind: 'rest_operation', operation: 'get_refund' }] },
    },
    200,
  );
  await must(`/workspaces/${WS}/agents/bot`, { method: 'PATCH', body: { state: 'published' } }, 200);
  const { key } = await must(`/workspaces/${WS}/agents/bot/keys`, { method: 'POST', body: { name: 'bench' } }, 201);

  client = new Client({ name: 'bench', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp/v1/${WS}/bot`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  const tool = [];
  for (let i = 0; i < calls + 20; i++) {
    const started = performance.now();
    const result = await client.callTool({ name: 'get_refund', arguments: { id: `R-${i}` } });
    if (result.isError) throw new Error(`call failed: ${JSON.stringify(result.structuredContent)}`);
    if (i >= 20) tool.push(performance.now() - started);
  }
  const direct = [];
  for (let i = 0; i < calls + 20; i++) {
    const started = performance.now();
    await (await fetch(`${upstreamUrl}/refunds/R-${i}`)).text();
    if (i >= 20) direct.push(performance.now() - started);
  }
  const viaTool = summarize(tool);
  const plain = summarize(direct);
  console.log(
    JSON.stringify(
      { calls, toolCallMs: viaTool, directFetchMs: plain, medianOverheadMs: viaTool.p50 - plain.p50 },
      null,
      2,
    ),
  );
} finally {
  await client?.close().catch(() => undefined);
  await stack.stop();
  upstream.close();
}
