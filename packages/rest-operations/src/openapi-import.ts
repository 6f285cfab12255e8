import { dereference } from '@apidevtools/json-schema-ref-parser';
import { OperationVersionSpecSchema, type OperationMethod, type OperationVersionSpec } from './operation';

/** An operation the import pre-filled, as a draft to review. */
export interface OperationDraft {
  /** Tool-safe name (`^[A-Za-z0-9_.-]{1,64}$`), from `operationId` or method and path. */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly spec: OperationVersionSpec;
  /** What the import changed or dropped that a reviewer should know (a flattened body, a skipped header). */
  readonly notes: string[];
}

/** What {@link importOpenApi} made of a document. */
export interface OpenApiImport {
  readonly drafts: OperationDraft[];
  readonly refused: Array<{ readonly operation: string; readonly reason: string }>;
}

const METHODS: ReadonlyArray<[string, OperationMethod]> = [
  ['get', 'GET'],
  ['head', 'HEAD'],
  ['post', 'POST'],
  ['put', 'PUT'],
  ['patch', 'PATCH'],
  ['delete', 'DELETE'],
];

/** Headers the upstream's own settings provide: a parameter with one of these names is not an argument. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'host', 'proxy-authorization']);

type Json = Record<string, unknown>;

/**
 * Turns an OpenAPI 3.0/3.1 document into operation drafts for `upstream`:
 * names from `operationId`, path/query/header parameters and the JSON request body's
 * properties as arguments, `$ref`s resolved inside the document only (an external `$ref`
 * is left unresolved and its operation refused: an import must not fetch anything). A body
 * whose root is `allOf` is merged; `oneOf`/`anyOf` of object schemas is flattened (every
 * property of every branch, required only what all branches require); anything else that
 * cannot be flat at the root — a non-object body, cookie parameters that are required, a
 * body property named like a parameter twice — refuses that operation with the reason.
 * Drafts are never published by the import.
 *
 * @throws Error when the document is not OpenAPI 3 (no `openapi: 3.x`, no `paths`)
 */
export async function importOpenApi(document: unknown, upstream: string): Promise<OpenApiImport> {
  if (!isObject(document) || typeof document.openapi !== 'string' || !document.openapi.startsWith('3.'))
    throw new Error('not an OpenAPI 3 document (openapi: 3.x is missing)');
  if (!isObject(document.paths)) throw new Error('the document has no paths');
  const resolved: Json = await dereference<Json>(structuredClone(document), {
    resolve: { external: false },
    dereference: { circular: 'ignore' },
  });
  const drafts: OperationDraft[] = [];
  const refused: OpenApiImport['refused'] = [];
  const taken = new Set<string>();
  const paths = isObject(resolved.paths) ? resolved.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const [key, method] of METHODS) {
      const operation = item[key];
      if (!isObject(operation)) continue;
      const name = uniqueName(toolName(operation.operationId, key, path), taken);
      try {
        drafts.push(draftOf(name, method, path, item, operation, upstream));
        taken.add(name);
      } catch (err) {
        refused.push({ operation: name, reason: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  return { drafts, refused };
}

function draftOf(
  name: string,
  method: OperationMethod,
  path: string,
  item: Json,
  operation: Json,
  upstream: string,
): OperationDraft {
  const notes: string[] = [];
  const properties: Json = {};
  const required: string[] = [];
  const args: Record<string, { in: 'path' | 'query' | 'header' | 'body'; name?: string }> = {};

  for (const parameter of mergedParameters(item, operation)) {
    const where = parameter.in;
    const wire = String(parameter.name);
    if (hasRef(parameter)) throw new Error(`parameter ${wire} has an unresolved (external) $ref`);
    if (where === 'cookie') {
      if (parameter.required === true) throw new Error(`required cookie parameter ${wire} is not supported`);
      notes.push(`optional cookie parameter ${wire} dropped`);
      continue;
    }
    if (where === 'header' && CREDENTIAL_HEADERS.has(wire.toLowerCase())) {
      notes.push(`header ${wire} dropped: the upstream's credential provides it`);
      continue;
    }
    if (where !== 'path' && where !== 'query' && where !== 'header') continue;
    const argName = argumentName(wire, properties);
    args[argName] = argName === wire ? { in: where } : { in: where, name: wire };
    properties[argName] = withDescription(isObject(parameter.schema) ? parameter.schema : {}, parameter.description);
    if (parameter.required === true || where === 'path') required.push(argName);
  }

  const body = jsonBodySchema(operation);
  if (body !== undefined) {
    if (hasRef(body)) throw new Error('the request body has an unresolved (external) $ref');
    const flat = flattenBody(body, notes);
    for (const [prop, schema] of Object.entries(flat.properties)) {
      const argName = prop in properties ? `body_${prop}` : prop;
      if (argName in properties) throw new Error(`body property ${prop} collides with a parameter twice`);
      if (argName !== prop) notes.push(`body property ${prop} is argument ${argName} (a parameter has its name)`);
      args[argName] = argName === prop ? { in: 'body' } : { in: 'body', name: prop };
      properties[argName] = schema;
      if (flat.required.includes(prop)) required.push(argName);
    }
  }

  const spec = OperationVersionSpecSchema.parse({
    upstream,
    method,
    pathTemplate: path,
    arguments: args,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
    annotations: {
      readOnlyHint: method === 'GET' || method === 'HEAD',
      destructiveHint: method === 'DELETE',
      idempotentHint: method === 'GET' || method === 'HEAD' || method === 'PUT' || method === 'DELETE',
    },
  });
  const title = typeof operation.summary === 'string' ? operation.summary.slice(0, 200) : undefined;
  const description = typeof operation.description === 'string' ? operation.description.slice(0, 4000) : title;
  return {
    name,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    spec,
    notes,
  };
}

/** Path-item parameters overridden by the operation's own (same `name` and `in`). */
function mergedParameters(item: Json, operation: Json): Json[] {
  const byKey = new Map<string, Json>();
  for (const list of [item.parameters, operation.parameters])
    if (Array.isArray(list)) for (const p of list) if (isObject(p)) byKey.set(`${String(p.in)}:${String(p.name)}`, p);
  return [...byKey.values()];
}

function jsonBodySchema(operation: Json): Json | undefined {
  const body = operation.requestBody;
  if (!isObject(body) || !isObject(body.content)) return undefined;
  const media = Object.entries(body.content).find(([type]) => /^application\/([a-z.+-]*\+)?json\b/i.test(type));
  if (media === undefined) {
    if (body.required === true) throw new Error('the request body is not JSON');
    return undefined;
  }
  const schema = isObject(media[1]) ? media[1].schema : undefined;
  return isObject(schema) ? schema : {};
}

/** A body schema as flat object properties (see {@link importOpenApi}). */
function flattenBody(schema: Json, notes: string[]): { properties: Json; required: string[] } {
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.filter(isObject).map((part) => flattenBody(part, notes));
    const own = isObject(schema.properties) ? flattenBody({ ...schema, allOf: undefined }, notes) : undefined;
    return mergeAll([...parts, ...(own !== undefined ? [own] : [])], 'all');
  }
  const branches = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (branches !== undefined) {
    const parts = branches.filter(isObject).map((branch) => {
      if (!isObjectSchema(branch)) throw new Error('the request body is a oneOf/anyOf of non-object schemas');
      return flattenBody(branch, notes);
    });
    notes.push('the request body was a oneOf/anyOf: flattened (every branch property; required only where all agree)');
    return mergeAll(parts, 'some');
  }
  if (!isObjectSchema(schema)) throw new Error('the request body is not an object: a tool input must be flat');
  return {
    properties: isObject(schema.properties) ? { ...schema.properties } : {},
    required: Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
  };
}

function mergeAll(
  parts: Array<{ properties: Json; required: string[] }>,
  mode: 'all' | 'some',
): { properties: Json; required: string[] } {
  const properties: Json = {};
  for (const part of parts) Object.assign(properties, part.properties);
  const required =
    mode === 'all'
      ? [...new Set(parts.flatMap((p) => p.required))]
      : (parts[0]?.required ?? []).filter((r) => parts.every((p) => p.required.includes(r)));
  return { properties, required };
}

function isObjectSchema(schema: Json): boolean {
  return schema.type === 'object' || (schema.type === undefined && isObject(schema.properties));
}

function toolName(operationId: unknown, method: string, path: string): string {
  const raw =
    typeof operationId === 'string' && operationId !== ''
      ? operationId
      : `${method}_${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '_')}`;
  const cleaned = raw.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^_+|_+$/g, '');
  return (cleaned === '' ? method : cleaned).slice(0, 64);
}

function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const candidate = `${name.slice(0, 60)}_${i}`;
    if (!taken.has(candidate)) return candidate;
  }
}

function argumentName(wire: string, properties: Json): string {
  const base = wire
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/^([^A-Za-z_])/, '_$1')
    .slice(0, 64);
  if (!(base in properties)) return base;
  for (let i = 2; ; i++) if (!(`${base}_${i}` in properties)) return `${base}_${i}`;
}

function withDescription(schema: Json, description: unknown): Json {
  return typeof description === 'string' && schema.description === undefined ? { ...schema, description } : schema;
}

function hasRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasRef);
  if (!isObject(value)) return false;
  return typeof value.$ref === 'string' || Object.values(value).some(hasRef);
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
