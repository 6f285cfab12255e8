import { defineOps } from '@dagu-mcp/contracts';
import { ServiceWorker, type HandlerMap } from './src/index';
import { z } from 'zod';
const now = () => performance.timeOrigin + performance.now();
const ops = defineOps({ echo: { request: z.object({ text: z.string() }), reply: z.object({ text: z.string() }), mutation: false } });
const pe: number[] = [], hs: number[] = [], pub: number[] = [];
let cur = 0;
const handlers: HandlerMap<typeof ops> = { echo: async (p) => { cur = Number(p.text); hs.push(now() - cur); return { text: p.text }; } };
const worker = new ServiceWorker({ service: 'dag', catalog: ops, handlers, redisUrl: 'redis://127.0.0.1:6379', prefix: process.argv[2]! , concurrency: Number(process.env.CONC ?? 16)});
const op = worker['process'].bind(worker); const opub = worker['publish'].bind(worker);
(worker as any)['process'] = (job: any) => { pe.push(now() - Number(job.data.payload.text)); return op(job); };
(worker as any)['publish'] = (a: string, b: string, c: string) => { pub.push(now() - cur); return opub(a, b, c); };
worker.start().then(() => process.stdout.write('READY\n'));
process.on('SIGTERM', async () => {
  const med = (xs: number[]) => { const s = xs.slice(300).sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!.toFixed(3); };
  console.log('worker: processEntry', med(pe), 'handler', med(hs), 'publish', med(pub));
  await worker.close(); process.exit(0);
});
