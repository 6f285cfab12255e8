import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
async function main() {
  const conn = new Redis('redis://127.0.0.1:6379');
  const q = new Queue('q', { connection: conn, prefix: 'inspect' });
  await q.add('echo', { a: 1 }, { jobId: 'j1', removeOnComplete: true, removeOnFail: { count: 1000 }, attempts: 1 });
  await q.add('echo', { a: 1 }, { jobId: 'j2', removeOnComplete: true, removeOnFail: { count: 1000 }, attempts: 3, backoff: { type: 'exponential', delay: 100 } });
  console.log(await conn.hgetall('inspect:q:j1'));
  console.log(await conn.hgetall('inspect:q:j2'));
  console.log(await conn.keys('inspect:*'));
  console.log(await conn.hgetall('inspect:q:meta'));
  console.log(await conn.xrange('inspect:q:events', '-', '+'));
  console.log(await conn.zrange('inspect:q:marker', 0, -1, 'WITHSCORES'), await conn.lrange('inspect:q:wait', 0, -1), await conn.get('inspect:q:id'));
  await q.obliterate({ force: true }); await q.close(); conn.disconnect();
}
main();
