import { parentPort } from 'node:worker_threads';
import { describeWorkbook, WorkbookFaultError } from './workbook-load';

/**
 * Worker-thread entry of workbook reads (`workbook-workers.ts`): parses one
 * workbook per message, off run-service's event loop, and answers each with
 * `{ok: true, model}` or `{ok: false, fault}`; anything else thrown is
 * `{ok: false, fault: 'unexpected', message}` (the decryptor's messages never
 * echo the password). The thread stays for the next read, so ExcelJS is
 * loaded once per thread, not once per read. No zod here: loading it would
 * cost each new thread as much as ExcelJS does.
 */
interface ParseRequest {
  bytes: Uint8Array;
  path: string;
  password?: string;
  profileRowCap?: number;
}

function requestOf(message: unknown): ParseRequest | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  if (!('bytes' in message) || !(message.bytes instanceof Uint8Array)) return undefined;
  if (!('path' in message) || typeof message.path !== 'string') return undefined;
  const password = 'password' in message && typeof message.password === 'string' ? message.password : undefined;
  const cap =
    'profileRowCap' in message && typeof message.profileRowCap === 'number' ? message.profileRowCap : undefined;
  return {
    bytes: message.bytes,
    path: message.path,
    ...(password !== undefined ? { password } : {}),
    ...(cap !== undefined ? { profileRowCap: cap } : {}),
  };
}

async function parse(request: ParseRequest): Promise<unknown> {
  try {
    const { bytes } = request;
    const model = await describeWorkbook(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), {
      path: request.path,
      ...(request.password !== undefined ? { password: request.password } : {}),
      ...(request.profileRowCap !== undefined ? { profileRowCap: request.profileRowCap } : {}),
    });
    return { ok: true, model };
  } catch (error) {
    if (error instanceof WorkbookFaultError) return { ok: false, fault: error.fault };
    return { ok: false, fault: 'unexpected', message: error instanceof Error ? error.message : '' };
  }
}

parentPort?.on('message', (message: unknown) => {
  const request = requestOf(message);
  if (request === undefined) {
    parentPort?.postMessage({ ok: false, fault: 'unexpected', message: 'malformed parse request' });
    return;
  }
  void parse(request).then((answer) => parentPort?.postMessage(answer));
});
