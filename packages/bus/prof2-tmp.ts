import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
async function stat(r: Redis) { const s = await r.info('commandstats'); const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(s)!; return [Number(m[1]), Number(m[2])]; }
async function main() {
  const prefix = 'prof-' + randomUUID().slice(0, 6);
  const conn = new Redis('redis://127.0.0.1:6379');
  const q = new Queue('q', { connection: conn, prefix });
  await q.waitUntilReady();
  const data = { op: 'echo', payload: { text: 'hello' }, principal: { id: 'a', subject: 'a', role: 'admin', credentialType: 'none' }, deadline: Date.now() + 10000, traceContext: {}, replyTo: 'x:reply:y' };
  for (let i = 0; i < 200; i++) await q.add('echo', data, { jobId: randomUUID(), removeOnComplete: true });
  const [c0, u0] = await stat(conn);
  for (let i = 0; i < 2000; i++) await q.add('echo', data, { jobId: randomUUID(), removeOnComplete: true, removeOnFail: { count: 1000 }, attempts: 1 });
  const [c1, u1] = await stat(conn);
  console.log('addStandardJob usec/call', (u1 - u0) / (c1 - c0), 'calls', c1 - c0, 'wait len', await q.getWaitingCount());
  await q.obliterate({ force: true }); await q.close(); conn.disconnect();
}
main();
