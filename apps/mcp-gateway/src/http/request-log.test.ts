import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { requestId } from './request-id';
import { requestLog } from './request-log';

test('one line per request with ids, and neither the session id nor the query reach the log', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = express();
  app.use(requestId());
  app.use(requestLog(pino({ level: 'debug' }, sink)));
  app.get('/mcp', (_req, res) => {
    res.status(204).end();
  });
  const server = app.listen(0);
  const port = (server.address() as { port: number }).port;
  await fetch(`http://127.0.0.1:${port}/mcp?token=dagu_secret`, {
    headers: { 'mcp-session-id': 'session-secret', 'x-request-id': 'req-1' },
  });
  await new Promise((r) => setTimeout(r, 20));
  server.close();
  const line = JSON.parse(lines.join('')) as Record<string, unknown>;
  expect(line).toMatchObject({
    requestId: 'req-1',
    method: 'GET',
    path: '/mcp',
    status: 204,
    sessionRef: expect.stringMatching(/^[0-9a-f]{12}$/),
  });
  expect(lines.join('')).not.toContain('session-secret');
  expect(lines.join('')).not.toContain('dagu_secret');
});
