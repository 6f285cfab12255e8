import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { startStack, createApiKey } from './lib/stack.mjs';
import { openSession, request, mcpHeaders, rpcBody, keepAliveAgent } from './lib/mcp-http.mjs';
import { applyDags, dagYaml } from './lib/dags.mjs';
import { summarize } from './lib/stats.mjs';
const redisSrv = spawn('redis-server', ['--port', '16379', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
const redisUrl = 'redis://127.0.0.1:16379';
const stack = await startStack({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/test', redisUrl });
const r = new Redis(redisUrl);
const stats = async () => Object.fromEntries((await r.info('commandstats')).split('\n').filter((l) => l.startsWith('cmdstat_')).map((l) => [l.split(':')[0].slice(8), Number(/calls=(\d+)/.exec(l)[1])]));
try {
  const token = await createApiKey(stack);
  const agent = keepAliveAgent(1);
  const s = await openSession(stack.mcpUrl, { token, agent });
  await applyDags(stack.mcpUrl, s, token, [{ name: 'dag-00001', spec: dagYaml(1) }]);
  const body = (id) => rpcBody(id, 'tools/call', { name: 'dagu_read', arguments: { target: 'dag_spec', name: 'dag-00001' } });
  for (let i = 0; i < 300; i++) await request(stack.mcpUrl, { headers: mcpHeaders({ token, ...s }), agent, body: body(i + 10) });
  await new Promise((res) => setTimeout(res, 6000)); // let periodic timers settle
  const idle0 = await stats(); await new Promise((res) => setTimeout(res, 5000)); const idle1 = await stats();
  const mon = spawn('redis-cli', ['-p', '16379', 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let monOut = '';
  mon.stdout.on('data', (d) => (monOut += d));
  await new Promise((res) => setTimeout(res, 300));
  for (let i = 0; i < 50; i++) await request(stack.mcpUrl, { headers: mcpHeaders({ token, ...s }), agent, body: body(i + 5000) });
  await new Promise((res) => setTimeout(res, 300));
  mon.kill();
  const { execSync } = await import('node:child_process');
  const ss = execSync('ss -tnp').toString();
  const owner = {};
  for (const line of ss.split('\n')) { const m = /127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:16379\s+users:\(\("node",pid=(\d+)/.exec(line); if (m) owner[m[1]] = m[2]; }
  const names = Object.fromEntries(Object.entries(stack.pids).map(([a, p]) => [String(p), a]));
  const counts = {};
  for (const line of monOut.split('\n')) {
    const m = /\[\d+ (lua|127\.0\.0\.1:(\d+))\] "([^"]+)"/.exec(line);
    if (!m) continue;
    const who = m[1] === 'lua' ? 'lua(inside script)' : (names[owner[m[2]]] ?? `port ${m[2]}`);
    const key = `${who} ${m[3].toLowerCase()}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const perClient = Object.entries(counts).map(([k, v]) => [k, v / 50]).sort();
  console.log('per request, by client (top-level round trips) and inside Lua:');
  for (const [k, v] of perClient) console.log(v.toFixed(2).padStart(6), k);
  const N = 1000;
  const before = await stats();
  const lat = [];
  for (let i = 0; i < N; i++) { const a = await request(stack.mcpUrl, { headers: mcpHeaders({ token, ...s }), agent, body: body(i + 1000) }); lat.push(a.ms); }
  const after = await stats();
  const per = {};
  for (const k of Object.keys(after)) { const d = (after[k] - (before[k] ?? 0)) - ((idle1[k] ?? 0) - (idle0[k] ?? 0)) * 0; if (d > 0) per[k] = +(d / N).toFixed(2); }
  const idle = {}; for (const k of Object.keys(idle1)) { const d = idle1[k] - (idle0[k] ?? 0); if (d > 0) idle[k] = d; }
  console.log('latency', summarize(lat));
  console.log('redis commands per tools/call (incl. background over', (N*summarize(lat).mean/1000).toFixed(1), 's):', per, 'total', Object.values(per).reduce((a, b) => a + b, 0).toFixed(2));
  console.log('idle background commands in 5 s:', idle);
} finally { r.disconnect(); await stack.stop(); redisSrv.kill(); }
