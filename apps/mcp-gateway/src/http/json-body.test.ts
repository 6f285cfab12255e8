import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { jsonBody } from './json-body';
import { JsonParseThreads } from './json-parse-threads';

/** The threads, counting the bodies they were given (to tell which path a body took). */
class CountingThreads extends JsonParseThreads {
  jobs = 0;
  override parse(bytes: Uint8Array, charset: string): Promise<unknown> {
    this.jobs += 1;
    return super.parse(bytes, charset);
  }
}

const threads = new CountingThreads();
let server: Server;
let url: string;

beforeAll(async () => {
  const app = express();
  app.post('/', jsonBody({ limitBytes: 256 * 1024, threadMinBytes: 1024, threads }), (req, res) => {
    res.json({ body: req.body as unknown });
  });
  app.use((err: { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({ type: err.type ?? 'other' });
  });
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/`;
});

afterAll(async () => {
  await threads.close();
  await new Promise((resolve) => server.close(resolve));
});

async function post(body: string | Uint8Array, contentType = 'application/json') {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('jsonBody', () => {
  const large = { jsonrpc: '2.0', id: 7, params: { spec: `steps: ${'['.repeat(4000)}` } };

  it('parses a small body in place and a large one on a thread, to the same value', async () => {
    const before = threads.jobs;
    expect(await post(JSON.stringify({ a: [1, 'two', null] }))).toEqual({
      status: 200,
      json: { body: { a: [1, 'two', null] } },
    });
    expect(threads.jobs).toBe(before);
    expect(await post(`  \n${JSON.stringify(large)}`)).toEqual({ status: 200, json: { body: large } });
    expect(threads.jobs).toBe(before + 1);
  });

  it('answers an empty body with {}, as express.json() does', async () => {
    expect(await post('')).toEqual({ status: 200, json: { body: {} } });
  });

  it.each([
    ['small', 'not json'],
    ['small, a string (strict: object or array only)', '"text"'],
    ['large', `{"a": "${'x'.repeat(4000)}"`],
    ['large, a string', `"${'x'.repeat(4000)}"`],
  ])('refuses a body that is not a JSON object or array (%s) as entity.parse.failed', async (_label, text) => {
    expect(await post(text)).toEqual({ status: 400, json: { type: 'entity.parse.failed' } });
  });

  it('reads UTF-16 on either path and refuses a charset that is not UTF-*', async () => {
    const utf16 = (text: string) => new Uint8Array(Buffer.from(text, 'utf16le'));
    const type = 'application/json; charset=utf-16le';
    expect(await post(utf16('{"é": 1}'), type)).toEqual({ status: 200, json: { body: { é: 1 } } });
    expect(await post(utf16(JSON.stringify(large)), type)).toEqual({ status: 200, json: { body: large } });
    expect(await post('{}', 'application/json; charset=latin1')).toEqual({
      status: 415,
      json: { type: 'charset.unsupported' },
    });
  });

  it('refuses a body past the limit as entity.too.large', async () => {
    expect(await post(JSON.stringify({ a: 'x'.repeat(300 * 1024) }))).toEqual({
      status: 413,
      json: { type: 'entity.too.large' },
    });
  });

  it('answers the waiting request when its thread dies, and parses the next one on a new thread', async () => {
    const dying = new JsonParseThreads();
    const waiting = dying.parse(new TextEncoder().encode('{"a": 1}'), 'utf-8');
    await dying.close();
    await expect(waiting).rejects.toThrow(/thread exited/);
    await expect(dying.parse(new TextEncoder().encode('[1]'), 'utf-8')).resolves.toEqual([1]);
    await dying.close();
  });
});
