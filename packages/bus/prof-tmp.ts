import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { defineOps } from '@dagu-mcp/contracts';
import { BusClient } from './src/index';
import { z } from 'zod';
const now = () => performance.timeOrigin + performance.now();
const ops = defineOps({ echo: { request: z.object({ text: z.string() }), reply: z.object({ text: z.string() }), mutation: false } });
const principal = { id: 'b', subject: 'b', role: 'admin', credentialType: 'none' } as const;
async function main() {
  const prefix = 'prof-' + randomUUID().slice(0, 6);
  const child = spawn(process.execPath, ['-r', './packages/bus/test-fixtures/ts-register.js', 'packages/bus/prof-worker-tmp.ts', prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>(r => child.stdout.on('data', (d: Buffer) => { if (d.toString().includes('READY')) r(); else process.stdout.write(d); }));
  const client = new BusClient({ redisUrl: 'redis://127.0.0.1:6379', prefix });
  await client.start();
  let msgAt = 0; let sentAt = 0; const toSent: number[] = [];
  const cmds = client['commands']!; const orig = cmds.sendCommand.bind(cmds);
  (cmds as any).sendCommand = (c: any, st: any) => { if (sentAt === 0) sentAt = now(); return orig(c, st); };
  client['subscriber']!.prependListener('message', () => { msgAt = now(); });
  const n = 3000; const tot: number[] = [], toMsg: number[] = [];
  for (let i = 0; i < n + 300; i++) {
    sentAt = 0; const s = now();
    await client.call('dag', ops, 'echo', { text: String(s) }, { principal });
    const e = now();
    if (i >= 300) { tot.push(e - s); toMsg.push(msgAt - s); toSent.push(sentAt - s); }
  }
  const med = (xs: number[]) => { xs.sort((a, b) => a - b); return xs[Math.floor(xs.length / 2)]!.toFixed(3); };
  console.log('client: total', med(tot), 'toMsg', med(toMsg), 'toSent', med(toSent));
  await client.close();
  child.kill('SIGTERM'); await new Promise(r => child.once('exit', r));
}
main();
