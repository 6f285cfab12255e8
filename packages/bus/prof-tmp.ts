import { randomUUID } from 'node:crypto';
import { defineOps } from '@dagu-mcp/contracts';
import { BusClient, ServiceWorker, type HandlerMap } from './src/index';
import { z } from 'zod';
const ops = defineOps({ echo: { request: z.object({ text: z.string() }), reply: z.object({ text: z.string() }), mutation: false } });
let hs = 0, msgAt = 0, pe = 0, pub = 0, dis = 0;
const handlers: HandlerMap<typeof ops> = { echo: async (p) => { hs = performance.now(); return { text: p.text }; } };
const principal = { id: 'b', subject: 'b', role: 'admin', credentialType: 'none' } as const;
async function main() {
  const prefix = 'prof-' + randomUUID().slice(0, 6);
  const redisUrl = 'redis://127.0.0.1:6379';
  const worker = new ServiceWorker({ service: 'dag', catalog: ops, handlers, redisUrl, prefix });
  const client = new BusClient({ redisUrl, prefix });
  await worker.start(); await client.start();
  client['subscriber']!.prependListener('message', () => { msgAt = performance.now(); });
  const origProcess = worker['process'].bind(worker); const origPublish = worker['publish'].bind(worker);
  (worker as any)['process'] = (job: any) => { pe = performance.now(); return origProcess(job); };
  (worker as any)['publish'] = (a: string, b: string, c: string) => { pub = performance.now(); return origPublish(a, b, c); };
  const origDispatch = client['dispatch'].bind(client);
  (client as any)['dispatch'] = (...args: any[]) => { dis = performance.now(); return (origDispatch as any)(...args); };
  const n = 3000; const tot: number[] = [], toH: number[] = [], toMsg: number[] = [], msgToDone: number[] = [], toPe: number[] = [], toPub: number[] = [], toDis: number[] = [];
  for (let i = 0; i < n + 300; i++) {
    const s = performance.now();
    await client.call('dag', ops, 'echo', { text: 'hello' }, { principal });
    const e = performance.now();
    if (i >= 300) { toPe.push(pe - s); toPub.push(pub - s); toDis.push(dis - s); tot.push(e - s); toH.push(hs - s); toMsg.push(msgAt - s); msgToDone.push(e - msgAt); }
  }
  const med = (xs: number[]) => { xs.sort((a, b) => a - b); return xs[Math.floor(xs.length / 2)]!.toFixed(3); };
  console.log('dispatch', med(toDis), 'processEntry', med(toPe), 'publish', med(toPub)); console.log('total', med(tot), 'toHandler', med(toH), 'toMsg', med(toMsg), 'msgToDone', med(msgToDone));
  await client.close(); await worker.close();
}
main();
