/**
 * Bus round-trip latency at concurrency 1 (one call in flight at a time).
 *
 * Run (no build needed; SWC compiles on the fly, Redis must be up):
 *   node bench/bus-roundtrip.run.js [--n 5000] [--warmup 500] [--rounds 5] [--redis redis://127.0.0.1:6379] [--in-process]
 * Suggested root script: "bench:bus": "node bench/bus-roundtrip.run.js"
 *
 * Measures, after `warmup` untimed calls each, in `rounds` interleaved rounds (so a
 * change of load on the machine hits every case alike):
 *  (a) floor:    a raw Redis PING round trip (ioredis);
 *  (b) naive:    BullMQ `queue.add` + `job.waitUntilFinished(queueEvents)` to a plain Worker echo;
 *  (c) bus:      `BusClient.call` → `ServiceWorker` echo handler (reply over pub/sub);
 *  (d) baseline: the same call with no Redis at all: payload validation, envelope
 *                JSON round trip, `processBusJob`, reply encode/decode and validation;
 *  (e) stock:    (c) with the direct hand-off off (`BUS_HANDOFF=false`: `Queue.add`,
 *                BullMQ's Worker fetches), to tell whether packages/bus/src/handoff still pays.
 * Prints p50/p99 of each, then what (b) and (c) add: the target is (c) − (d) ≤ 0.5 ms at p50.
 * Workers run in a child process, as a service replica apart from the gateway;
 * `--in-process` runs them on this process's event loop instead (slower: every
 * step then competes for one thread).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { type BusRequest } from '@dagu-mcp/contracts';
import { BusClient, decodeReplyMessage, encodeReplyMessage, processBusJob, SILENT_LOGGER } from '@dagu-mcp/bus';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { deleteKeysWithPrefix } from '../packages/bus/test-fixtures/bus-test-env';
import { benchHandlers as handlers, benchOps, NAIVE_QUEUE, startBenchWorker } from './bus-roundtrip.worker';

const principal = { id: 'bench', subject: 'bench', role: 'admin', credentialType: 'none' } as const;

/**
 * Starts the worker of `mode` in a child process (default) or in this one
 * (`--in-process`); resolves with its stop function once it takes jobs.
 */
async function startWorker(
  mode: 'naive' | 'bus' | 'bus-stock',
  redisUrl: string,
  prefix: string,
  inProcess: boolean,
): Promise<() => Promise<void>> {
  if (inProcess) return startBenchWorker(mode, redisUrl, prefix);
  const register = path.resolve(__dirname, '..', 'packages', 'bus', 'test-fixtures', 'ts-register.js');
  const child = spawn(
    process.execPath,
    ['-r', register, path.join(__dirname, 'bus-roundtrip.worker.ts'), mode, redisUrl, prefix],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench worker exited with ${String(code)}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('READY')) resolve();
    });
  });
  return async () => {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  };
}

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

interface Stats {
  p50: number;
  p99: number;
}

/** p50/p99 in ms of a set of samples. */
function statsOf(samples: number[]): Stats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Runs `once` `warmup` times untimed, then `n` times timed, appending each duration (ms) to `into`. */
async function measure(n: number, warmup: number, once: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < warmup; i += 1) await once();
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    await once();
    into.push(performance.now() - started);
  }
}

/** (d): everything (c) does except talking to Redis. */
async function inProcessCall(text: string): Promise<unknown> {
  const checked = z.safeParse(benchOps.echo.request, { text });
  if (!checked.success) throw checked.error;
  const request: BusRequest = {
    op: 'echo',
    payload: { text },
    principal,
    deadline: Date.now() + 10_000,
    traceContext: {},
    replyTo: 'bench:reply:x',
  };
  const data: unknown = JSON.parse(JSON.stringify(request));
  const outcome = await processBusJob(
    benchOps,
    handlers,
    { data, jobId: randomUUID(), attemptsMade: 0, maxAttempts: 1 },
    SILENT_LOGGER,
  );
  if (outcome.kind !== 'reply') throw new Error(`unexpected outcome ${outcome.kind}`);
  const message = decodeReplyMessage(encodeReplyMessage('x', outcome.reply));
  if (message === undefined || !message.reply.ok) throw new Error('bad reply');
  return z.parse(benchOps.echo.reply, message.reply.data);
}

async function main(): Promise<void> {
  const n = Number(argument('n', '5000'));
  const warmup = Number(argument('warmup', '500'));
  const rounds = Math.max(1, Number(argument('rounds', '5')));
  const redisUrl = argument('redis', 'redis://127.0.0.1:6379');
  const inProcess = process.argv.includes('--in-process');
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const where = inProcess ? 'workers in this process' : 'workers in a child process';
  console.log(`bus round trip, concurrency 1, n=${n} after ${warmup} warm-up, ${rounds} interleaved rounds, ${where}`);
  console.log(
    `${redisUrl}, node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]?.toFixed(2)}`,
  );

  const redis = new Redis(redisUrl);
  const naiveQueue = new Queue(NAIVE_QUEUE, { connection: { url: redisUrl }, prefix });
  const naiveEvents = new QueueEvents(NAIVE_QUEUE, { connection: { url: redisUrl }, prefix });
  const client = new BusClient({ redisUrl, prefix });
  const stockClient = new BusClient({ redisUrl, prefix, handoff: false });
  const stopNaive = await startWorker('naive', redisUrl, prefix, inProcess);
  const stopBus = await startWorker('bus', redisUrl, prefix, inProcess);
  const stopStock = await startWorker('bus-stock', redisUrl, prefix, inProcess);
  await Promise.all([naiveQueue.waitUntilReady(), naiveEvents.waitUntilReady(), client.start(), stockClient.start()]);

  const cases: { label: string; once: () => Promise<unknown>; samples: number[] }[] = [
    { label: '(a) floor: Redis PING', once: () => redis.ping(), samples: [] },
    {
      label: '(b) naive: add + waitUntilFinished',
      once: async () => {
        // Completed jobs are kept (last 1000): waitUntilFinished reads the job back after it subscribed.
        const job = await naiveQueue.add(
          'echo',
          { text: 'hello' },
          { removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
        );
        return job.waitUntilFinished(naiveEvents);
      },
      samples: [],
    },
    {
      label: '(c) bus: BusClient.call → ServiceWorker',
      once: () => client.call('dag', benchOps, 'echo', { text: 'hello' }, { principal }),
      samples: [],
    },
    { label: '(d) baseline: same work in process, no Redis', once: () => inProcessCall('hello'), samples: [] },
    {
      label: '(e) stock: (c) with BUS_HANDOFF=false',
      once: () => stockClient.call('wiki', benchOps, 'echo', { text: 'hello' }, { principal }),
      samples: [],
    },
  ];
  // Interleaved rounds: a load change on the machine hits every case alike.
  for (let round = 0; round < rounds; round += 1) {
    for (const { once, samples } of cases)
      await measure(Math.ceil(n / rounds), round === 0 ? warmup : 50, once, samples);
  }
  const [a, b, c, d, e] = cases.map(({ label, samples }) => {
    const stats = statsOf(samples);
    console.log(`${label.padEnd(44)} p50 ${fmt(stats.p50)} ms   p99 ${fmt(stats.p99)} ms`);
    return stats;
  });
  if (a === undefined || b === undefined || c === undefined || d === undefined || e === undefined)
    throw new Error('missing results');
  console.log('');
  console.log(`naive added over PING floor      p50 ${fmt(b.p50 - a.p50)} ms`);
  console.log(`bus added over PING floor        p50 ${fmt(c.p50 - a.p50)} ms`);
  console.log(`bus added over in-process (c−d)  p50 ${fmt(c.p50 - d.p50)} ms   (target ≤ 0.500)`);
  console.log(`bus vs naive (c−b)               p50 ${fmt(c.p50 - b.p50)} ms   p99 ${fmt(c.p99 - b.p99)} ms`);
  console.log(`stock added over in-process (e−d) p50 ${fmt(e.p50 - d.p50)} ms`);
  console.log(`hand-off saves (e−c)             p50 ${fmt(e.p50 - c.p50)} ms   p99 ${fmt(e.p99 - c.p99)} ms`);
  console.log(`load average at the end ${os.loadavg()[0]?.toFixed(2)}`);

  await Promise.all([client.close(), stockClient.close()]);
  await Promise.all([stopBus(), stopStock(), stopNaive(), naiveEvents.close(), naiveQueue.close()]);
  redis.disconnect();
  await deleteKeysWithPrefix(redisUrl, prefix);
}

function fmt(ms: number): string {
  return ms.toFixed(3).padStart(7);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
