/**
 * The service side of bench/bus-roundtrip.ts, in its own process as in
 * production (a service replica apart from the gateway):
 *   node -r ./packages/bus/test-fixtures/ts-register.js bench/bus-roundtrip.worker.ts <naive|bus|bus-stock> <redisUrl> <prefix>
 * (`bus-stock`: the bus with the hand-off off, on the wiki queue.)
 * Prints READY once taking jobs; closes gracefully on SIGTERM. Also exports
 * the echo catalog and handler, so both sides use the same ones.
 */
import { defineOps } from '@dagu-mcp/contracts';
import { ServiceWorker, type HandlerMap } from '@dagu-mcp/bus';
import { Worker, type Job } from 'bullmq';
import { z } from 'zod';

export const benchOps = defineOps({
  echo: { request: z.object({ text: z.string() }), reply: z.object({ text: z.string() }), mutation: false },
});
export const benchHandlers: HandlerMap<typeof benchOps> = { echo: async (payload) => ({ text: payload.text }) };

/** Queue name of the naive measurement (a plain BullMQ queue, not a bus service). */
export const NAIVE_QUEUE = 'naive';

/** Starts the worker of `mode`; resolves with its close function once it takes jobs. */
export async function startBenchWorker(mode: string, redisUrl: string, prefix: string): Promise<() => Promise<void>> {
  if (mode === 'naive') {
    const worker = new Worker(NAIVE_QUEUE, async (job: Job<unknown, unknown, string>) => job.data, {
      connection: { url: redisUrl },
      prefix,
      concurrency: 16,
    });
    await worker.waitUntilReady();
    return () => worker.close();
  }
  if (mode === 'bus') {
    const worker = new ServiceWorker({ service: 'dag', catalog: benchOps, handlers: benchHandlers, redisUrl, prefix });
    await worker.start();
    return () => worker.close();
  }
  if (mode === 'bus-stock') {
    const worker = new ServiceWorker({
      service: 'wiki',
      catalog: benchOps,
      handlers: benchHandlers,
      redisUrl,
      prefix,
      handoff: false,
    });
    await worker.start();
    return () => worker.close();
  }
  throw new Error(`unknown bench worker mode ${mode}`);
}

if (require.main === module) {
  const [mode = '', redisUrl = 'redis://127.0.0.1:6379', prefix = 'bench'] = process.argv.slice(2);
  startBenchWorker(mode, redisUrl, prefix).then(
    (close) => {
      process.stdout.write('READY\n');
      process.once('SIGTERM', () => void close().then(() => process.exit(0)));
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
}
