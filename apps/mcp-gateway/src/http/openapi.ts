import { z } from 'zod';
import type { RegisteredRoute } from './rest-router';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'Contract error code; branch on it, not on the message.' },
    message: { type: 'string' },
    field: { type: 'string' },
    details: { type: 'object' },
    requestId: { type: 'string' },
  },
};

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Invalid request',
  '401': 'Not authenticated',
  '403': 'Not authorized, or API key not accepted on rest_api',
  '404': 'Not found',
  '409': 'Conflict',
  '429': 'Too many failed attempts',
  '503': 'A backend is unavailable',
};

/** Express `/a/:id/*path` → OpenAPI `/a/{id}/{path}`; returns the path and its parameter names. */
export function toOpenApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

/**
 * Builds the OpenAPI 3.1 document of the REST API from the registered routes
 * (their access, summary and zod schemas), so the document and the routes
 * cannot drift apart.
 */
export function buildOpenApiDocument(
  routes: readonly RegisteredRoute[],
  opts: { version: string; basePath: string },
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const { path, params } = toOpenApiPath(route.path);
    const key = `${opts.basePath}/api/v1${path}`;
    const parameters: Array<Record<string, unknown>> = params.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (route.method !== 'get' && route.access !== 'public') {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Per caller: the same key with the same request within 24 h returns the original result; another request is 409 (docs/rest-api.md "Idempotency and unanswered changes").',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      });
    }
    if (route.spec.query !== undefined) {
      const query = jsonSchema(route.spec.query);
      const properties = isRecord(query.properties) ? query.properties : {};
      const required = new Set(
        Array.isArray(query.required) ? query.required.filter((name): name is string => typeof name === 'string') : [],
      );
      for (const [name, schema] of Object.entries(properties))
        parameters.push({ name, in: 'query', required: required.has(name), schema });
    }
    const status = String(route.spec.status ?? 200);
    const errors = Object.fromEntries(
      Object.entries(ERROR_STATUSES)
        .filter(([code]) => route.access !== 'public' || !['401', '403'].includes(code))
        .map(([code, description]) => [
          code,
          { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        ]),
    );
    paths[key] = {
      ...(paths[key] ?? {}),
      [route.method]: {
        summary: route.spec.summary,
        ...(route.spec.description !== undefined ? { description: route.spec.description } : {}),
        tags: [route.spec.tag],
        'x-dagu-role': route.access,
        'x-dagu-action': route.spec.action,
        ...(route.access === 'public' ? { security: [] } : {}),
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(route.spec.body !== undefined
          ? {
              requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.spec.body) } } },
            }
          : {}),
        responses: {
          [status]:
            status === '204'
              ? { description: 'Done' }
              : { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
          ...errors,
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dagu MCP REST API',
      version: opts.version,
      description: 'The REST surface of the gateway; the same origin serves MCP at /mcp.',
    },
    servers: [{ url: opts.basePath === '' ? '/' : opts.basePath }],
    security: [{ bearer: [] }, { basic: [] }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A login token or an API key with the rest_api surface.',
        },
        basic: { type: 'http', scheme: 'basic' },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
