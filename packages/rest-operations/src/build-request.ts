import { DaguError } from '@dagu-mcp/contracts';
import { FORBIDDEN_HEADERS, type OperationVersionSpec, type Upstream } from './operation';

/** An upstream request ready to send. Carries the upstream's credential: never log it. */
export interface UpstreamRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

/**
 * A tool input that cannot become a request: `invalid_tool_input` on the argument, with the
 * operation named in `details.operation` and nothing of the upstream or its credential.
 */
export function mappingError(operation: string, field: string, message: string): DaguError {
  return new DaguError('invalid_tool_input', `${operation}: ${message}`, { field, details: { operation } });
}

/**
 * Builds the upstream request of one call from validated tool input:
 * - path arguments are encoded as one segment each; a value with `/`, `\`, or that is `.`
 *   or `..` is refused (no argument walks the upstream's paths);
 * - query arguments are appended (arrays repeat the parameter);
 * - header arguments only under the names the version declares, never `Host`,
 *   `Authorization`, `Cookie` (the version schema refuses those names), without CR/LF;
 * - body arguments form one JSON object;
 * - the upstream's default headers, then its credential, are set last, so input cannot
 *   replace them; the caller's own credential is not an input at all.
 * The URL keeps the base URL's origin whatever the template says.
 *
 * @param operation the operation's name, for error messages
 * @param input the tool arguments, already validated against `spec.inputSchema`
 * @throws DaguError `invalid_tool_input` (see {@link mappingError})
 */
export function buildUpstreamRequest(
  operation: string,
  spec: OperationVersionSpec,
  upstream: Upstream,
  input: Readonly<Record<string, unknown>>,
): UpstreamRequest {
  const base = new URL(upstream.baseUrl);
  let path = spec.pathTemplate;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  const body: Record<string, unknown> = {};
  let hasBody = false;

  for (const [name, placement] of Object.entries(spec.arguments)) {
    const value = input[name];
    if (value === undefined || value === null) continue;
    const wire = placement.name ?? name;
    switch (placement.in) {
      case 'path': {
        const text = scalarText(operation, name, value);
        if (/[/\\]/.test(text) || text === '.' || text === '..' || text === '')
          throw mappingError(operation, name, 'a path argument may not be empty, contain / or \\, or be . or ..');
        path = path.split(`{${wire}}`).join(encodeURIComponent(text));
        break;
      }
      case 'query':
        for (const item of Array.isArray(value) ? value : [value])
          query.append(wire, scalarText(operation, name, item));
        break;
      case 'header': {
        const text = scalarText(operation, name, value);
        if (/[\r\n\0]/.test(text)) throw mappingError(operation, name, 'a header value may not contain line breaks');
        if (FORBIDDEN_HEADERS.has(wire.toLowerCase()))
          throw mappingError(operation, name, `header ${wire} may not be set by input`);
        headers[wire.toLowerCase()] = text;
        break;
      }
      case 'body':
        body[wire] = value;
        hasBody = true;
        break;
    }
  }
  if (/\{[^}]+\}/.test(path)) throw mappingError(operation, 'pathTemplate', 'a path argument is missing');

  const basePath = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  const url = new URL(base.origin);
  url.pathname = `${basePath}${path}`;
  // No segment of the final path may be `..` (a template typo must not escape the base path either).
  if (url.pathname.split('/').some((segment) => segment === '..' || segment === '%2e%2e'))
    throw mappingError(operation, 'pathTemplate', 'the path may not contain ..');
  for (const [k, v] of base.searchParams) url.searchParams.append(k, v);
  for (const [k, v] of query) url.searchParams.append(k, v);

  for (const [k, v] of Object.entries(upstream.defaultHeaders ?? {})) headers[k.toLowerCase()] = v;
  if (hasBody) headers['content-type'] = 'application/json';
  headers.accept ??= 'application/json, text/plain;q=0.9, */*;q=0.5';
  applyCredential(upstream, url, headers);
  return {
    method: spec.method,
    url,
    headers,
    ...(hasBody ? { body: JSON.stringify(body) } : {}),
  };
}

function applyCredential(upstream: Upstream, url: URL, headers: Record<string, string>): void {
  const credential = upstream.credential;
  if (credential === undefined) return;
  switch (credential.type) {
    case 'bearer':
      headers.authorization = `Bearer ${credential.token}`;
      break;
    case 'basic':
      headers.authorization = `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`;
      break;
    case 'header':
      headers[credential.header.toLowerCase()] = credential.value;
      break;
    case 'query':
      url.searchParams.set(credential.param, credential.value);
      break;
  }
}

function scalarText(operation: string, field: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw mappingError(operation, field, 'a path, query or header argument must be a string, number or boolean');
}
