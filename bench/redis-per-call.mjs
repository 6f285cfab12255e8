#!/usr/bin/env node
/**
 * Counts the Redis commands one `tools/call dagu_read dag_spec` costs, by
 * process: starts a private redis-server (port 16379, so other work on the
 * machine's Redis does not count), the built stack on it, sends 50 calls one
 * at a time under MONITOR and attributes each command to the process owning
 * the connection (`ss -tnp`), or to the Lua script it ran in.
 *
 *   node bench/redis-per-call.mjs [calls=50]
 *
 * Needs redis-server, redis-cli and ss on PATH, and a built tree.
 */
import { execSync, spawn } from 'node:child_process';
import { startStack, createApiKey } from './lib/stack.mjs';
import { openSession, request, mcpHeaders, rpcBody, keepAliveAgent } from './lib/mcp-http.mjs';
import { applyDags, dagYaml } from './lib/dags.mjs';

const CALLS = Number(process.argv[2] ?? 50);
const PORT = 16379;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const redis = spawn(
  'redis-server',
  ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  { stdio: 'ignore' },
);
await sleep(500);
const stack = await startStack({
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: `redis://127.0.0.1:${PORT}`,
});
try {
  const token = await createApiKey(stack);
  const agent = keepAliveAgent(1);
  const session = await openSession(stack.mcpUrl, { token, agent });
  await applyDags(stack.mcpUrl, session, token, [{ name: 'dag-00001', spec: dagYaml(1) }]);
  const once = (id) =>
    request(stack.mcpUrl, {
      headers: mcpHeaders({ token, ...session }),
      agent,
      body: rpcBody(id, 'tools/call', { name: 'dagu_read', arguments: { target: 'dag_spec', name: 'dag-00001' } }),
    });
  for (let i = 0; i < 200; i += 1) await once(i + 10);
  const monitor = spawn('redis-cli', ['-p', String(PORT), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let log = '';
  monitor.stdout.on('data', (d) => (log += d));
  await sleep(300);
  for (let i = 0; i < CALLS; i += 1) await once(i + 10_000);
  await sleep(300);
  monitor.kill();
  const owners = {};
  for (const line of execSync('ss -tnp').toString().split('\n')) {
    const m = new RegExp(`127\\.0\\.0\\.1:(\\d+)\\s+127\\.0\\.0\\.1:${PORT}\\s+users:\\(\\("node",pid=(\\d+)`).exec(
      line,
    );
    if (m) owners[m[1]] = m[2];
  }
  const apps = Object.fromEntries(Object.entries(stack.pids).map(([app, pid]) => [String(pid), app]));
  const counts = {};
  for (const line of log.split('\n')) {
    const m = /\[\d+ (lua|127\.0\.0\.1:(\d+))\] "([^"]+)"/.exec(line);
    if (!m) continue;
    const who = m[1] === 'lua' ? 'inside Lua' : (apps[owners[m[2]]] ?? `port ${m[2]}`);
    counts[who] ??= {};
    counts[who][m[3].toLowerCase()] = (counts[who][m[3].toLowerCase()] ?? 0) + 1;
  }
  console.log(
    `Redis commands per tools/call dagu_read dag_spec (${CALLS} calls, one at a time; background timers included):`,
  );
  for (const [who, cmds] of Object.entries(counts).sort()) {
    const total = Object.values(cmds).reduce((a, b) => a + b, 0) / CALLS;
    const list = Object.entries(cmds)
      .sort((a, b) => b[1] - a[1])
      .map(([c, n]) => `${c} ${(n / CALLS).toFixed(2)}`)
      .join(', ');
    console.log(`${who.padEnd(12)} ${total.toFixed(2).padStart(6)}  ${list}`);
  }
} finally {
  await stack.stop();
  redis.kill();
}
