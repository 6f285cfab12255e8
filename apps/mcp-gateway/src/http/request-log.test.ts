import express from 'express';
import { captureLogs } from '../../../../packages/runtime/test-fixtures/log-capture';
import { requestId } from './request-id';
import { requestLog } from './request-log';

test('one line per request with ids, and neither the session id nor the query reach the log', async () => {
  const logs = captureLogs('debug');
  const app = express();
  app.use(requestId());
  app.use(requestLog(logs.logger));
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
  expect(logs.lines).toHaveLength(1);
  expect(logs.lines[0]).toMatchObject({
    requestId: 'req-1',
    method: 'GET',
    path: '/mcp',
    status: 204,
    sessionRef: expect.stringMatching(/^[0-9a-f]{12}$/),
  });
  expect(logs.text()).not.toContain('session-secret');
  expect(logs.text()).not.toContain('dagu_secret');
});
