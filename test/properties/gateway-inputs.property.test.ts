/**
 * No input is a bug (issue 18 "property tests at scale"; dagu-model §10):
 * through the real stack, arbitrary arguments of all three tools never get
 * `internal_error` (nor a JSON-RPC error: tool faults are `isError`
 * results), and arbitrary bodies of every REST route with a body (read from
 * the gateway's own OpenAPI document, so a new route is covered without
 * editing this test) never get HTTP 500 or `internal_error`.
 *
 * Each case is an HTTP round trip through gateway, bus and service, so the
 * cases per property are a twentieth of `PROPERTY_RUNS` (500 in the fault
 * suite), else 20; the parsers behind them get the full count in
 * tool-parsers.property.test.ts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { connectClient, startStack, type Stack } from '../e2e/stack';
import { CHANGE_TOOL_FIELDS, EXECUTE_TOOL_FIELDS, READ_TOOL_FIELDS, restBody, toolArgs } from './tool-inputs';

const RUNS = Math.max(20, Math.ceil(Number(process.env.PROPERTY_RUNS ?? 200) / 20));

let stack: Stack;
let client: Client;

beforeAll(async () => {
  stack = await startStack();
  client = await connectClient(stack.mcpUrl);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

const tools = [
  ['dagu_read', READ_TOOL_FIELDS],
  ['dagu_change', CHANGE_TOOL_FIELDS],
  ['dagu_execute', EXECUTE_TOOL_FIELDS],
] as const;

describe.each(tools)('%s with arbitrary arguments', (name, fields) => {
  test('is answered, never with internal_error or a JSON-RPC error', async () => {
    await fc.assert(
      fc.asyncProperty(toolArgs(fields), async (args) => {
        let result;
        try {
          result = await client.request(
            { method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } },
            CallToolResultSchema,
            { timeout: 30_000 },
          );
        } catch (err) {
          throw new Error(
            `a JSON-RPC error for ${JSON.stringify(args)}: ${err instanceof McpError ? err.message : String(err)}`,
            { cause: err },
          );
        }
        const code = (result.structuredContent as { code?: unknown } | undefined)?.code;
        expect(code).not.toBe('internal_error');
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});

/** The routes of the OpenAPI document that take a JSON body, with the body's field names. */
async function routesWithBodies(): Promise<Array<{ method: string; path: string; fields: string[] }>> {
  const res = await fetch(`${stack.baseUrl}/api/v1/openapi.json`);
  const doc = (await res.json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const routes: Array<{ method: string; path: string; fields: string[] }> = [];
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, operation] of Object.entries(methods)) {
      const body = operation.requestBody as
        { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } | undefined;
      const schema = body?.content?.['application/json']?.schema;
      if (schema === undefined) continue;
      routes.push({ method: method.toUpperCase(), path, fields: Object.keys(schema.properties ?? { x: 1 }) });
    }
  return routes;
}

const pathValue = fc.oneof(
  fc.constantFrom('prop-dag', 'default', 'latest', 'x'),
  fc.stringMatching(/^[a-z0-9_.-]{1,10}$/),
);

test('every REST route with a body: arbitrary bodies and path values never get 500 or internal_error', async () => {
  const routes = await routesWithBodies();
  expect(routes.length).toBeGreaterThan(5);
  for (const route of routes) {
    // Authentication routes are left out: failed logins are rate-limited by design (docs/security.md).
    if (route.path.includes('/auth/')) continue;
    await fc.assert(
      fc.asyncProperty(
        restBody(route.fields),
        fc.array(pathValue, { minLength: 4, maxLength: 4 }),
        async (body, values) => {
          let i = 0;
          const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[i++] ?? 'x'));
          const res = await fetch(`${stack.baseUrl}/api/v1${path.replace(/^\/api\/v1/, '')}`, {
            method: route.method,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(30_000),
          });
          const text = await res.text();
          expect({ route: `${route.method} ${path}`, status: res.status }).not.toMatchObject({ status: 500 });
          expect(text).not.toContain('"internal_error"');
        },
      ),
      { numRuns: RUNS },
    );
  }
}, 900_000);
