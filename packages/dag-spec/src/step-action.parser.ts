/**
 * `action` + `with` (dagu-model.md §3): `dag.run` / `dag.enqueue`
 * (`{dag, params}`), `http.request` (`{method, url, headers, body,
 * timeout_sec}`), `human.task` (`{prompt, form}`; not inside foreach and
 * not in handlers) and the host actions of dagu-actions §1.3, §1.6–1.8
 * (host-action.parser.ts). Every other action is refused as not supported here.
 */
import { HOST_ACTIONS, type JsonObject, type StepAction } from './dag.types';
import { isHostAction, parseHostAction } from './host-action.parser';
import type { ErrorSink } from './error-sink';
import { readNonNegativeInt } from './policies.parser';
import { readKeys } from './keys';
import { isReservedValueName, reservedNameMessage } from './reserved-names';
import { asMap, compact, scalarToString, toPlain, type YamlMap } from './yaml-values';

/** Where the step sits: human tasks are allowed only among a DAG's top-level steps. */
export interface ActionContext {
  inForeach: boolean;
  inHandler: boolean;
}

/** Actions this project runs. */
export const SUPPORTED_ACTIONS = ['dag.run', 'dag.enqueue', 'http.request', 'human.task', ...HOST_ACTIONS] as const;

const DAG_NAME = /^[a-zA-Z0-9_.-]+$/;
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/**
 * Parses an action and its `with` map. Returns `undefined` after recording an
 * error for an unsupported action (`field 'action': action 'x' is not
 * supported here`) or a broken `with`. `withField` names the map in errors.
 */
export function parseAction(
  name: unknown,
  withValue: unknown,
  context: ActionContext,
  sink: ErrorSink,
  withField: string,
): StepAction | undefined {
  if (typeof name !== 'string' || !SUPPORTED_ACTIONS.some((action) => action === name)) {
    sink.field('action', `action '${scalarToString(name) ?? ''}' is not supported here`);
    return undefined;
  }
  const raw = withValue === undefined || withValue === null ? new Map<string, unknown>() : asMap(withValue);
  if (!raw) {
    sink.field(withField, 'must be a map', withValue);
    return undefined;
  }
  const present: YamlMap = new Map([...raw].filter(([, value]) => value !== undefined));
  if (isHostAction(name)) return parseHostAction(name, present, sink, withField);
  if (name === 'http.request') return parseHttp(present, sink, withField);
  if (name === 'human.task') return parseHumanTask(present, context, sink, withField);
  return parseDagCall(name === 'dag.enqueue' ? 'dag.enqueue' : 'dag.run', present, sink, withField);
}

function parseDagCall(
  type: 'dag.run' | 'dag.enqueue',
  map: YamlMap,
  sink: ErrorSink,
  field: string,
): StepAction | undefined {
  const keys = readKeys(map, { allowed: ['dag', 'params'] }, sink, `${field}.`);
  const dag = keys.get('dag');
  if (typeof dag !== 'string' || !DAG_NAME.test(dag) || dag.length > 40 || dag === '.' || dag === '..') {
    sink.field(
      field === 'call' ? 'call' : `${field}.dag`,
      'sub-DAG name is required and must be a valid DAG name',
      dag,
    );
    return undefined;
  }
  const params = keys.get('params');
  if (params === undefined || params === null) return { type, dag };
  if (typeof params === 'string') return { type, dag, params };
  const paramMap = asMap(params);
  if (!paramMap) {
    sink.field(`${field}.params`, 'must be a string or a map', params);
    return undefined;
  }
  const record: Record<string, string> = {};
  for (const [key, value] of paramMap) {
    const text = scalarToString(value);
    if (text === undefined) sink.field(`${field}.params.${key}`, 'param value must be a scalar', value);
    else record[key] = text;
  }
  return { type, dag, params: record };
}

function parseHttp(map: YamlMap, sink: ErrorSink, field: string): StepAction | undefined {
  const keys = readKeys(
    map,
    {
      allowed: ['method', 'url', 'headers', 'body', 'timeout_sec', 'timeout', 'query', 'silent', 'format', 'json'],
      unsupported: {
        form: 'multipart forms are not supported here',
        files: 'multipart file fields are not supported here',
        output: 'writing the response to a file is not supported here; use output: to capture stdout',
        skip_tls_verify: 'skipping TLS verification is not supported here',
        debug: 'debug output is not supported here',
      },
    },
    sink,
    `${field}.`,
  );
  const url = keys.get('url');
  const method = scalarToString(keys.get('method') ?? 'GET')?.toUpperCase() ?? '';
  if (typeof url !== 'string' || url.trim() === '') sink.field(`${field}.url`, 'url is required', url);
  if (!HTTP_METHODS.includes(method))
    sink.field(`${field}.method`, `must be one of ${HTTP_METHODS.join(', ')}`, method);
  const headers = stringMap(keys.get('headers'), `${field}.headers`, sink);
  const query = keys.has('query') ? stringMap(keys.get('query'), `${field}.query`, sink) : undefined;
  const format = keys.get('format');
  if (format !== undefined && format !== null && format !== 'json' && format !== 'text')
    sink.field(`${field}.format`, 'must be json or text', format);
  const json = format === 'json' || readBool(keys.get('json'), `${field}.json`, sink) === true;
  const silent = readBool(keys.get('silent'), `${field}.silent`, sink);
  if (keys.has('timeout') && keys.has('timeout_sec'))
    sink.field(`${field}.timeout`, "cannot be combined with 'timeout_sec'");
  const timeoutKey = keys.has('timeout') ? 'timeout' : 'timeout_sec';
  const body = keys.get('body');
  if (typeof url !== 'string' || url.trim() === '') return undefined;
  return compact<StepAction>({
    type: 'http.request',
    method,
    url,
    headers,
    body:
      body === undefined || body === null ? undefined : typeof body === 'string' ? body : JSON.stringify(toPlain(body)),
    timeoutSec: readNonNegativeInt(keys.get(timeoutKey), `${field}.${timeoutKey}`, sink),
    query,
    silent,
    json: json || undefined,
  });
}

function readBool(value: unknown, field: string, sink: ErrorSink): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  sink.field(field, 'must be true or false', value);
  return undefined;
}

/** A map of scalar values as strings (`headers`, `query`); errors name `field`. */
function stringMap(value: unknown, field: string, sink: ErrorSink): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === undefined || value === null) return out;
  const map = asMap(value);
  if (!map) {
    sink.field(field, 'must be a map', value);
    return out;
  }
  for (const [key, item] of map) {
    const text = scalarToString(item);
    if (text === undefined) sink.field(`${field}.${key}`, 'value must be a scalar', item);
    else out[key] = text;
  }
  return out;
}

function parseHumanTask(map: YamlMap, context: ActionContext, sink: ErrorSink, field: string): StepAction | undefined {
  if (context.inForeach) sink.field('action', 'human.task is not allowed inside foreach', 'human.task');
  if (context.inHandler) sink.field('action', 'human.task is not allowed in handler_on', 'human.task');
  const keys = readKeys(map, { allowed: ['prompt', 'form'] }, sink, `${field}.`);
  const prompt = keys.get('prompt');
  const form = keys.get('form');
  const plainForm = toPlain(form);
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    sink.field(`${field}.prompt`, 'human.task prompt is required', prompt);
    return undefined;
  }
  if (form === undefined || form === null) return { type: 'human.task', prompt };
  if (!asMap(form) || plainForm === null || typeof plainForm !== 'object' || Array.isArray(plainForm)) {
    sink.field(`${field}.form`, 'must be a JSON schema object', form);
    return undefined;
  }
  const formObject: JsonObject = plainForm;
  const properties = formObject.properties;
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    for (const name of Object.keys(properties))
      if (isReservedValueName(name)) sink.field(`${field}.form.properties`, reservedNameMessage(name), name);
  }
  return { type: 'human.task', prompt, form: formObject };
}
