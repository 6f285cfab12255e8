/**
 * The baseline: a plain @modelcontextprotocol/sdk Streamable HTTP server in
 * the SDK's documented stateless pattern (examples/server/
 * simpleStatelessStreamableHttp + jsonResponseStreamableHttp): the SDK's
 * Express app, a new McpServer and transport per request, JSON responses.
 * It answers `dagu_read` with target `dag_spec` from memory, with the very
 * results the full stack returned for the same DAGs (so both send the same
 * bytes).
 *
 *   node bench/lib/baseline-server.mjs <results.json> [port]
 *
 * results.json: `{ "<dag name>": <CallToolResult>, … }`. Prints
 * `LISTENING <port>` once it accepts connections; exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import * as z from 'zod';

const results = new Map(Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8'))));
const port = Number(process.argv[3] ?? 0);

function getServer() {
  const server = new McpServer({ name: 'bench-baseline', version: '1.0.0' });
  server.registerTool(
    'dagu_read',
    { description: 'Reads a stored DAG spec (bench baseline).', inputSchema: { target: z.string(), name: z.string() } },
    async ({ target, name }) => {
      const result = target === 'dag_spec' ? results.get(name) : undefined;
      if (result === undefined) return { isError: true, content: [{ type: 'text', text: `No DAG named ${name}.` }] };
      return result;
    },
  );
  return server;
}

const app = createMcpExpressApp();
app.post('/mcp', async (req, res) => {
  const server = getServer();
  try {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    if (!res.headersSent)
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
  }
});
const listener = app.listen(port, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${listener.address().port}\n`);
});
process.on('SIGTERM', () => listener.close(() => process.exit(0)));
