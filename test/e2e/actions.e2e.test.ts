/**
 * Dagu's built-in step actions through the real stack (issue 49;
 * dagu-actions §1.1, §1.3, §1.6–1.8): the real Dagu files ex05 (template and
 * file actions) and v1-execute-jq-command (legacy jq) run as Dagu runs them;
 * jq.filter, template.render and file.* in their three authoring forms, with
 * the spec's outputs and error texts; docker.run / container.run validate and
 * fail at run time with "no container engine". Runs get a uid each
 * (`RUN_STEP_UID_RANGE`), so the test also shows the helper process runs as
 * the run's uid: `file.read` of another run's directory is refused.
 * http.request runs in that helper too and follows `OUTBOUND_ALLOW_CIDRS`.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { daguExample } from '../../packages/dag-spec/test-fixtures/dagu-examples';
import { connectClient, startStack, type Stack } from './stack';

const FIRST_UID = 201000;
const LAST_UID = 201099;

interface Step {
  name: string;
  status: number;
  error?: string;
  outputs?: Record<string, string>;
}
interface Run {
  dagRunId: string;
  status: number;
  steps: Step[];
}

let stack: Stack;
let client: Client;
let workDir: string;
let server: Server;
let baseUrl: string;
let mcpHttp: Server;
let mcpUrl: string;
const mcpAuth: string[] = [];

/** A real MCP server (the SDK's), stateless Streamable HTTP: `add` (structured), `echo` (text), `fail` (isError). */
function newMcpServer(): McpServer {
  const mcp = new McpServer({ name: 'e2e-tools', version: '1.0.0' });
  mcp.registerTool(
    'add',
    { inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  mcp.registerTool('fail', {}, () => ({ content: [{ type: 'text', text: 'the tool broke' }], isError: true }));
  return mcp;
}

beforeAll(async () => {
  // A real local HTTP server for http.request (no mocks of HTTP clients).
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/todos/1') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 1, title: 'delectus aut autem', completed: false }));
    } else if (url.pathname === '/echo') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-seen': 'yes' });
        res.end(
          JSON.stringify({
            method: req.method,
            q: url.searchParams.get('q'),
            auth: req.headers.authorization ?? null,
            body,
          }),
        );
      });
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nothing here');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  mcpHttp = createServer((req, res) => {
    mcpAuth.push(String(req.headers.authorization ?? ''));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const mcp = newMcpServer();
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((done) => mcpHttp.listen(0, '127.0.0.1', done));
  mcpUrl = `http://127.0.0.1:${(mcpHttp.address() as AddressInfo).port}/mcp`;
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (process.getuid?.() !== 0) throw new Error('this test switches uids: run it as root');
  workDir = mkdtempSync(join(tmpdir(), 'e2e-actions-'));
  stack = await startStack({
    RUN_STEP_UID_RANGE: `${FIRST_UID}-${LAST_UID}`,
    RUN_WORK_DIR: workDir,
    // The local HTTP server is loopback; http.request reaches nothing else non-public.
    OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    RUN_MCP_SERVERS: JSON.stringify({ tools: { url: mcpUrl, headers: { Authorization: 'Bearer ${MCP_TOKEN}' } } }),
  });
  client = await connectClient(stack.mcpUrl);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
  rmSync(workDir, { recursive: true, force: true });
  await new Promise((done) => server.close(done));
  await new Promise((done) => mcpHttp.close(done));
});

async function preview(name: string, spec: string): Promise<{ valid: boolean; errors: string[] }> {
  const r = await client.callTool({ name: 'dagu_change', arguments: { name, spec } });
  return r.structuredContent as { valid: boolean; errors: string[] };
}

/** Applies `spec` as DAG `name`, starts it and waits for its end. */
async function run(name: string, spec: string, env?: Record<string, string>): Promise<Run> {
  const applied = await client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  const started = await client.callTool(
    {
      name: 'dagu_execute',
      arguments: { action: 'start', name, wait: true, waitTimeoutSeconds: 60, ...(env ? { params: env } : {}) },
    },
    undefined,
    { timeout: 70_000 },
  );
  return (started.structuredContent as { run: Run }).run;
}

async function stdoutOf(name: string, dagRunId: string, stepName: string): Promise<string> {
  const log = await client.callTool({ name: 'dagu_read', arguments: { target: 'step_log', name, dagRunId, stepName } });
  return (log.structuredContent as { data: { stdoutContent: string } }).data.stdoutContent;
}

const stepOf = (r: Run, name: string): Step | undefined => r.steps.find((s) => s.name === name);

describe('the real Dagu files', () => {
  test('ex05-template-and-file.yaml renders a report into the artifacts dir and reads it back', async () => {
    const r = await run('ex05', readFileSync(daguExample('ex05-template-and-file.yaml'), 'utf8'));
    expect(r.steps.map((s) => [s.name, s.status, s.error])).toEqual([
      ['render_report', 4, undefined],
      ['read_report', 4, undefined],
    ]);
    expect(r.status).toBe(4);
    expect(await stdoutOf('ex05', r.dagRunId, 'read_report')).toBe('# First Launch Report\n\nstatus=ok\nsource=Dagu');
    const report = join(workDir, 'ex05', r.dagRunId, 'artifacts', 'first-launch-report.md');
    // Written by the helper as the run's uid (then the directory went back to run-service).
    expect(statSync(report).mode & 0o777).toBe(0o600);
  }, 90_000);

  test('v1-execute-jq-command.yaml: legacy jq, filter in command, JSON in script; no command = "."', async () => {
    const r = await run('v1-jq', readFileSync(daguExample('v1-execute-jq-command.yaml'), 'utf8'));
    expect(r.status).toBe(4);
    expect(await stdoutOf('v1-jq', r.dagRunId, 'run query')).toBe('{\n  "sample": 42\n}');
    expect(await stdoutOf('v1-jq', r.dagRunId, 'format json')).toBe(
      '{\n  "id": "sample",\n  "10": {\n    "b": 42\n  }\n}',
    );
  }, 90_000);
});

describe('jq.filter (dagu-actions §1.3)', () => {
  test('three forms, args with their types, raw, input from an earlier file, and a filter error', async () => {
    const spec = `env:
  - LIMIT: "2"
steps:
  - id: act
    action: jq.filter
    with:
      filter: '[.items[] | select(. > $min)] | length'
      data: {items: [1, 5, 9]}
      args: {$min: 2}
  - id: typed
    type: jq
    command: .name
    config: {raw: true}
    script: '{"name": "typed"}'
  - id: write
    action: file.write
    with: {path: in.json, content: '{"a": {"b": "\${LIMIT}"}}'}
  - id: fromfile
    depends: [write]
    action: jq.filter
    with: {filter: '.a.b | tonumber + 1', input: in.json}
  - id: literal
    action: jq.filter
    with: {filter: '"\${LIMIT}"', data: null, args: {}}
  - id: bad
    action: jq.filter
    with: {filter: '.x | error("boom")', data: {x: 1}}
    continue_on: {failure: true}
`;
    const r = await run('jq-forms', spec);
    expect(await stdoutOf('jq-forms', r.dagRunId, 'act')).toBe('2');
    expect(await stdoutOf('jq-forms', r.dagRunId, 'typed')).toBe('typed');
    expect(await stdoutOf('jq-forms', r.dagRunId, 'fromfile')).toBe('3');
    // With args, the filter is taken literally: no ${...} substitution in it.
    expect(await stdoutOf('jq-forms', r.dagRunId, 'literal')).toBe('"${LIMIT}"');
    expect(stepOf(r, 'bad')).toMatchObject({ status: 2 });
    expect(stepOf(r, 'bad')?.error).toContain('boom');
  }, 90_000);

  test('validation: a missing filter, data with input', async () => {
    const missing = await preview('jq-bad', 'steps:\n  - action: jq.filter\n    with: {data: 1}\n');
    expect(missing.errors.join('\n')).toContain('with.filter is required');
    const both = await preview('jq-bad', 'steps:\n  - action: jq.filter\n    with: {filter: ., data: 1, input: a}\n');
    expect(both).toMatchObject({ valid: false });
  });
});

describe('template.render (dagu-actions §1.7)', () => {
  test('pipelines, range, if/else, the listed functions, template_ref, output file, error texts', async () => {
    const spec = `env:
  - T: 'ref {{ .who | upper }}'
steps:
  - id: full
    action: template.render
    with:
      template: |
        {{- range $i, $x := .items }}{{ $i }}:{{ $x | trim | lower }} {{ end }}
        {{ if gt (.items | count) 2 }}many{{ else }}few{{ end }} {{ .csv | split "," | join "+" }} {{ .n | add 1 }} {{ .none | default "d" }} {{ empty .none }} \${literal}
      data: {items: [" A", "B "], csv: "x,y", n: 41, none: ""}
  - id: ref
    action: template.render
    with: {template_ref: '\${env.T}', data: {who: me}}
  - id: missing
    action: template.render
    with: {template: '{{ .absent }}', data: {}}
    continue_on: {failure: true}
  - id: parse
    action: template.render
    with: {template: '{{ if .x }}', data: {}}
    continue_on: {failure: true}
  - id: nofunc
    action: template.render
    with: {template: '{{ env "HOME" }}'}
    continue_on: {failure: true}
`;
    const r = await run('tpl', spec);
    expect(await stdoutOf('tpl', r.dagRunId, 'full')).toBe('0:a 1:b \nfew x+y 42 d true ${literal}');
    expect(await stdoutOf('tpl', r.dagRunId, 'ref')).toBe('ref ME');
    expect(stepOf(r, 'missing')?.error).toContain('map has no entry for key "absent"');
    expect(stepOf(r, 'parse')?.error).toContain('template: parse error');
    expect(stepOf(r, 'nofunc')?.error).toContain('function "env" not defined');
  }, 90_000);

  test('validation: template and template_ref', async () => {
    const neither = await preview('tpl-bad', 'steps:\n  - action: template.render\n    with: {data: {}}\n');
    expect(neither.errors.join('\n')).toContain('requires exactly one of with.template or with.template_ref');
    const ref = await preview(
      'tpl-bad',
      'steps:\n  - action: template.render\n    with: {template_ref: "a ${env.T}"}\n',
    );
    expect(ref.errors.join('\n')).toContain('must be one complete scoped value reference');
  });
});

describe('file.* (dagu-actions §1.8)', () => {
  test('write, stat, copy, list, read, move, delete, mkdir and their run-time errors', async () => {
    const spec = `type: chain
steps:
  - {id: w, action: file.write, with: {path: d/a.txt, content: "hello", create_dirs: true, mode: "0640"}}
  - {id: again, action: file.write, with: {path: d/a.txt, content: "x"}, continue_on: {failure: true}}
  - {id: st, action: file.stat, with: {path: d/a.txt}, output: ST}
  - {id: gone, action: file.stat, with: {path: nope, missing_ok: true}}
  - {id: cp, action: file.copy, with: {source: d/a.txt, destination: e/b.txt, create_dirs: true}}
  - {id: cpdir, action: file.copy, with: {source: d, destination: f}, continue_on: {failure: true}}
  - {id: ls, executor: file, command: list, config: {path: ., pattern: "**/*.txt", recursive: true}}
  - {id: rd, type: file, command: read, with: {path: e/b.txt, format: json}}
  - {id: rddir, action: file.read, with: {path: d}, continue_on: {failure: true}}
  - {id: big, action: file.read, with: {path: d/a.txt, max_bytes: 2}, continue_on: {failure: true}}
  - {id: mv, action: file.move, with: {source: e/b.txt, destination: e/c.txt}}
  - {id: rm, action: file.delete, with: {path: d}, continue_on: {failure: true}}
  - {id: rmr, action: file.delete, with: {path: d, recursive: true}}
  - {id: md, action: file.mkdir, with: {path: g/h}}
  - {id: raw, action: file.read, with: {path: e/c.txt}}
`;
    const r = await run('files', spec);
    const out = (id: string): Promise<string> => stdoutOf('files', r.dagRunId, id);
    expect(stepOf(r, 'again')?.error).toContain('file exists');
    expect(JSON.parse(await out('st'))).toMatchObject({ exists: true, type: 'file', size: 5, mode: '0640' });
    expect(JSON.parse(await out('gone'))).toMatchObject({ exists: false });
    expect(stepOf(r, 'cpdir')?.error).toContain('recursive is required to copy a directory');
    const listing = JSON.parse(await out('ls')) as { count: number; entries: Array<{ path: string }> };
    expect(listing.entries.map((e) => e.path)).toEqual(['d/a.txt', 'e/b.txt']);
    expect(JSON.parse(await out('rd'))).toMatchObject({ type: 'file', size: 5, content: 'hello' });
    expect(stepOf(r, 'rddir')?.error).toContain('cannot read a directory');
    expect(stepOf(r, 'big')?.error).toContain('exceeds max_bytes');
    expect(stepOf(r, 'rm')?.error).toContain('recursive is required to delete a directory');
    expect(JSON.parse(await out('md'))).toMatchObject({ created: true });
    expect(await out('raw')).toBe('hello');
    expect(stepOf(r, 'raw')).toMatchObject({ status: 4 });
  }, 90_000);

  test("file.read of another run's directory is refused (the helper runs as the run's uid)", async () => {
    const planted = await run('plant', 'steps:\n  - run: echo A-SECRET > secret.txt\n');
    expect(planted.status).toBe(4);
    const secret = join(workDir, 'plant', planted.dagRunId, 'secret.txt');
    const thief = await run(
      'thief',
      `steps:\n  - id: steal\n    action: file.read\n    with: {path: ${JSON.stringify(secret)}}\n`,
    );
    expect(thief.status).toBe(2);
    expect(stepOf(thief, 'steal')?.error).toMatch(/EACCES|permission denied/);
  }, 90_000);
});

describe('docker.run / container.run (dagu-actions §1.6)', () => {
  test('validate in the three forms and fail at run time: no container engine', async () => {
    const spec = `steps:
  - {id: act, action: docker.run, with: {image: alpine, command: [echo, hi], auto_remove: true}, continue_on: {failure: true}}
  - {id: alias, action: container.run, with: {container_name: web, command: ls}, continue_on: {failure: true}}
  - {id: legacy, executor: {type: docker, config: {image: alpine, autoRemove: true}}, command: echo hi, continue_on: {failure: true}}
  - {id: typed, type: docker, config: {image: alpine}, command: echo hi, continue_on: {failure: true}}
`;
    expect(await preview('containers', spec)).toMatchObject({ valid: true });
    const r = await run('containers', spec);
    for (const id of ['act', 'alias', 'legacy', 'typed']) {
      expect(stepOf(r, id)).toMatchObject({ status: 2 });
      expect(stepOf(r, id)?.error).toContain('no container engine');
    }
    const none = await preview('containers-bad', 'steps:\n  - action: docker.run\n    with: {command: ls}\n');
    expect(none.errors.join('\n')).toContain('with.image or with.container_name is required');
  }, 90_000);
});

describe('http.request (dagu-actions §1.2)', () => {
  test('cli-http-requests.yaml against a local server: output fields decoded from the JSON body', async () => {
    const spec = readFileSync(daguExample('cli-http-requests.yaml'), 'utf8').replace(
      'https://jsonplaceholder.typicode.com/todos/1',
      `${baseUrl}/todos/1`,
    );
    const r = await run('cli-http', spec);
    expect(r.status).toBe(4);
    expect(await stdoutOf('cli-http', r.dagRunId, 'show_result')).toBe('Todo: delectus aut autem (completed=false)');
  }, 90_000);

  test('three forms; silent, query, format json, timeout; a non-2xx prints status and headers, then fails; OUTBOUND_ALLOW_CIDRS', async () => {
    const spec = `env:
  - TOKEN: tok-1
steps:
  - id: act
    action: http.request
    with: {method: POST, url: "${baseUrl}/echo", query: {q: "\${TOKEN}"}, body: hi, silent: true, timeout: 5}
  - id: json
    action: http.request
    with: {method: GET, url: "${baseUrl}/echo", format: json}
  - id: legacy
    executor: http
    command: PUT ${baseUrl}/echo
    script: '{"headers": {"Authorization": "Bearer \${TOKEN}"}, "body": "b", "silent": true}'
  - id: typed
    type: http
    command: GET ${baseUrl}/echo
    config: {query: {q: typed}, json: true, silent: true}
  - id: missing
    action: http.request
    with: {method: GET, url: "${baseUrl}/nope"}
    continue_on: {failure: true}
  - id: metadata
    action: http.request
    with: {method: GET, url: "http://169.254.169.254/latest/meta-data/", timeout: 2}
    continue_on: {failure: true}
`;
    const r = await run('http-forms', spec);
    const out = (id: string): Promise<string> => stdoutOf('http-forms', r.dagRunId, id);
    expect(JSON.parse(await out('act'))).toEqual({ method: 'POST', q: 'tok-1', auth: null, body: 'hi' });
    expect(JSON.parse(await out('json'))).toMatchObject({
      status_code: 200,
      headers: { 'x-seen': 'yes' },
      body: { method: 'GET', q: null },
    });
    expect(JSON.parse(await out('legacy'))).toEqual({ method: 'PUT', q: null, auth: 'Bearer tok-1', body: 'b' });
    expect(JSON.parse(await out('typed'))).toEqual({ body: { method: 'GET', q: 'typed', auth: null, body: '' } });
    expect(stepOf(r, 'missing')).toMatchObject({ status: 2 });
    expect(stepOf(r, 'missing')?.error).toContain('http status code not 2xx: 404');
    expect(stepOf(r, 'metadata')).toMatchObject({ status: 2 });
    expect(stepOf(r, 'metadata')?.error).toContain('169.254.169.254 is link-local and not in OUTBOUND_ALLOW_CIDRS');
    expect(await out('missing')).toMatch(
      /^HTTP 404 Not Found\n[\s\S]*content-type: text\/plain[\s\S]*\n\nnothing here$/,
    );
  }, 90_000);
});

describe('mcp.call (dagu-actions §1.9 as amended)', () => {
  test('a tool of a RUN_MCP_SERVERS server: structured result, text result, isError, unknown server, url form', async () => {
    const spec = `env:
  - MCP_TOKEN: secret-mcp-token
  - B: "4"
steps:
  - id: add
    action: mcp.call
    with: {server: tools, tool: add, arguments: {a: 3, b: 4}}
  - id: echo
    action: mcp.call
    with: {server: tools, tool: echo, arguments: {text: "b=\${B}"}}
  - id: broken
    action: mcp.call
    with: {server: tools, tool: fail}
    continue_on: {failure: true}
  - id: nowhere
    action: mcp.call
    with: {server: missing, tool: add}
    continue_on: {failure: true}
  - id: byurl
    action: mcp.call
    with: {url: "${mcpUrl}", tool: echo, arguments: {text: direct}, timeout: 10}
`;
    const r = await run('mcp-calls', spec);
    const out = (id: string): Promise<string> => stdoutOf('mcp-calls', r.dagRunId, id);
    expect(JSON.parse(await out('add'))).toEqual({ sum: 7 });
    expect(await out('echo')).toBe('echo: b=4');
    expect(stepOf(r, 'broken')).toMatchObject({ status: 2, error: 'the tool broke' });
    expect(stepOf(r, 'nowhere')?.error).toContain("unknown server 'missing'");
    expect(await out('byurl')).toBe('echo: direct');
    // The server's headers reached the server, resolved from the step's environment.
    expect(mcpAuth).toContain('Bearer secret-mcp-token');
    // The secret is in no step log.
    for (const id of ['add', 'echo', 'broken', 'byurl']) expect(await out(id)).not.toContain('secret-mcp-token');
  }, 90_000);

  test('validation: a missing tool, neither server nor url', async () => {
    const missing = await preview('mcp-bad', 'steps:\n  - action: mcp.call\n    with: {server: tools}\n');
    expect(missing.errors.join('\n')).toContain('with.tool is required');
    const neither = await preview('mcp-bad', 'steps:\n  - action: mcp.call\n    with: {tool: add}\n');
    expect(neither.errors.join('\n')).toContain('mcp.call requires exactly one of with.server or with.url');
  });
});
