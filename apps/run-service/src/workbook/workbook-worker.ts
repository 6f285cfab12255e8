import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { describeWorkbook, WorkbookFaultError } from './workbook-load';

/**
 * Worker-thread entry of a workbook read (`workbook-reader.ts`): parses one
 * workbook off run-service's event loop and posts `{ok: true, model}` or
 * `{ok: false, fault}`. Anything else thrown is posted as `{ok: false,
 * fault: 'unexpected', message}` (the message never holds the password: the
 * decryptor's messages do not echo it).
 */
const WorkerInputSchema = z.object({
  bytes: z.instanceof(Uint8Array),
  path: z.string(),
  password: z.string().optional(),
  profileRowCap: z.number().int().positive().optional(),
});
type WorkerInput = z.infer<typeof WorkerInputSchema>;

async function run(input: WorkerInput): Promise<void> {
  try {
    const model = await describeWorkbook(Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.length), {
      path: input.path,
      ...(input.password !== undefined ? { password: input.password } : {}),
      ...(input.profileRowCap !== undefined ? { profileRowCap: input.profileRowCap } : {}),
    });
    parentPort?.postMessage({ ok: true, model });
  } catch (error) {
    if (error instanceof WorkbookFaultError) parentPort?.postMessage({ ok: false, fault: error.fault });
    else
      parentPort?.postMessage({ ok: false, fault: 'unexpected', message: error instanceof Error ? error.message : '' });
  }
}

const input = WorkerInputSchema.safeParse(workerData);
if (input.success) void run(input.data);
else parentPort?.postMessage({ ok: false, fault: 'unexpected', message: 'malformed worker input' });
