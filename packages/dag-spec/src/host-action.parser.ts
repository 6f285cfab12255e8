/**
 * The `with` maps of the host actions (dagu-actions §1.3 `jq.filter`, §1.6
 * `docker.run` / `container.run`, §1.7 `template.render`, §1.8 `file.*`):
 * allowed keys (camelCase spellings map to snake_case), required fields and
 * the checks the spec puts at validation. Values are kept as written; `${...}`
 * resolves when the step runs.
 */
import type { HostAction, HostActionName, JsonObject } from './dag.types';
import { HOST_ACTIONS } from './dag.types';
import type { ErrorSink } from './error-sink';
import { readKeys } from './keys';
import { asMap, toPlain, type YamlMap } from './yaml-values';

const FILE_KEYS: Readonly<Record<string, { allowed: string[]; required: string[] }>> = {
  'file.write': {
    allowed: ['path', 'content', 'mode', 'overwrite', 'atomic', 'create_dirs', 'dry_run'],
    required: ['path', 'content'],
  },
  'file.read': { allowed: ['path', 'format', 'max_bytes', 'follow_symlinks'], required: ['path'] },
  'file.stat': { allowed: ['path', 'missing_ok', 'follow_symlinks'], required: ['path'] },
  'file.copy': {
    allowed: ['source', 'destination', 'recursive', 'overwrite', 'create_dirs', 'dry_run', 'follow_symlinks'],
    required: ['source', 'destination'],
  },
  'file.move': {
    allowed: ['source', 'destination', 'recursive', 'overwrite', 'create_dirs', 'dry_run'],
    required: ['source', 'destination'],
  },
  'file.delete': { allowed: ['path', 'recursive', 'missing_ok', 'dry_run'], required: ['path'] },
  'file.mkdir': { allowed: ['path', 'mode'], required: ['path'] },
  'file.list': {
    allowed: ['path', 'pattern', 'recursive', 'include_dirs', 'follow_symlinks'],
    required: ['path'],
  },
};

const DOCKER_KEYS = [
  'image',
  'container_name',
  'command',
  'pull',
  'auto_remove',
  'working_dir',
  'volumes',
  'network',
  'platform',
  'exec',
];

/** `${env.T}`, `${steps.x.outputs.t}`, … : one complete scoped reference (dagu-actions §1.7). */
const SCOPED_REFERENCE = /^\$\{(env|steps|params|context)\.[^{}\s]+\}$/;

/** True when `name` is a host action (dagu-actions §1.3, §1.6–1.8). */
export function isHostAction(name: unknown): name is HostActionName {
  return typeof name === 'string' && HOST_ACTIONS.some((action) => action === name);
}

/**
 * Checks and keeps the `with` map of host action `name`. Errors name
 * `<field>.<key>` (`with.filter is required`, …, dagu-actions §1.3/1.6–1.8);
 * returns `undefined` after recording one.
 */
export function parseHostAction(
  name: HostActionName,
  map: YamlMap,
  sink: ErrorSink,
  field: string,
): HostAction | undefined {
  const before = sink.count;
  const allowed = allowedKeys(name);
  const keys = readKeys(map, { allowed }, sink, `${field}.`);
  const withObject: JsonObject = {};
  for (const [key, value] of keys) if (value !== undefined) withObject[key] = toPlain(value);
  const err = (message: string, value?: unknown): void => sink.field(field, message, value);
  if (name === 'jq.filter') checkJq(keys, err, field);
  else if (name === 'template.render') checkTemplate(keys, err, field);
  else if (name === 'docker.run' || name === 'container.run') checkDocker(keys, err, field);
  else if (name === 'mcp.call') checkMcpCall(keys, err, field);
  else checkFile(name, keys, err, field);
  return sink.count > before ? undefined : { type: name, with: withObject };
}

function allowedKeys(name: HostActionName): string[] {
  if (name === 'jq.filter') return ['filter', 'data', 'input', 'raw', 'args'];
  if (name === 'template.render') return ['template', 'template_ref', 'data', 'output'];
  if (name === 'docker.run' || name === 'container.run') return DOCKER_KEYS;
  if (name === 'mcp.call') return ['server', 'url', 'tool', 'arguments', 'headers', 'timeout'];
  return FILE_KEYS[name]?.allowed ?? [];
}

type Report = (message: string, value?: unknown) => void;

function requireString(keys: Map<string, unknown>, key: string, err: Report, field: string): void {
  const value = keys.get(key);
  if (value === undefined || value === null) err(`${field}.${key} is required`);
  else if (typeof value !== 'string' || value.trim() === '') err(`${field}.${key} must be a non-empty string`, value);
}

function checkJq(keys: Map<string, unknown>, err: Report, field: string): void {
  requireString(keys, 'filter', err, field);
  const hasData = keys.get('data') !== undefined;
  const hasInput = keys.get('input') !== undefined && keys.get('input') !== null;
  if (hasData && hasInput) err(`${field}.data and ${field}.input cannot be combined; give exactly one`);
  if (!hasData && !hasInput) err(`jq.filter requires exactly one of ${field}.data or ${field}.input`);
  if (hasInput) requireString(keys, 'input', err, field);
  const args = keys.get('args');
  if (args === undefined || args === null) return;
  const argMap = asMap(args);
  if (!argMap) {
    err(`${field}.args must be a map`, args);
    return;
  }
  for (const key of argMap.keys()) {
    const bare = key.startsWith('$') ? key.slice(1) : key;
    if (key.startsWith('$') && argMap.has(bare)) err(`${field}.args: both '${bare}' and '${key}' are given`);
  }
}

function checkTemplate(keys: Map<string, unknown>, err: Report, field: string): void {
  const template = keys.get('template');
  const ref = keys.get('template_ref');
  const hasTemplate = template !== undefined && template !== null;
  const hasRef = ref !== undefined && ref !== null;
  if (hasTemplate === hasRef) {
    err(`template.render requires exactly one of ${field}.template or ${field}.template_ref`);
    return;
  }
  if (hasTemplate && typeof template !== 'string') err(`${field}.template must be a string`, template);
  if (hasRef && (typeof ref !== 'string' || !SCOPED_REFERENCE.test(ref.trim())))
    err(
      `${field}.template_ref must be one complete scoped value reference such as \${env.T} or \${steps.x.outputs.t}`,
      ref,
    );
  const data = keys.get('data');
  if (data !== undefined && data !== null && !asMap(data)) err(`${field}.data must be a map`, data);
  const output = keys.get('output');
  if (output !== undefined && (typeof output !== 'string' || output.trim() === ''))
    err(`${field}.output must be a non-empty string`, output);
}

function checkDocker(keys: Map<string, unknown>, err: Report, field: string): void {
  const has = (key: string): boolean => keys.get(key) !== undefined && keys.get(key) !== null;
  if (!has('image') && !has('container_name'))
    err(`${field}.image or ${field}.container_name is required (create or exec mode)`);
  const pull = keys.get('pull');
  if (pull !== undefined && pull !== null && !['missing', 'always', 'never', true, false].some((ok) => ok === pull))
    err(`${field}.pull must be one of missing, always, never`, pull);
  const exec = keys.get('exec');
  if (exec !== undefined && exec !== null && !asMap(exec)) err(`${field}.exec must be a map`, exec);
}

/** `mcp.call` (dagu-actions §1.9, as amended): `tool` required; exactly one of `server` / `url`. */
function checkMcpCall(keys: Map<string, unknown>, err: Report, field: string): void {
  requireString(keys, 'tool', err, field);
  const has = (key: string): boolean => keys.get(key) !== undefined && keys.get(key) !== null;
  if (has('server') === has('url')) err(`mcp.call requires exactly one of ${field}.server or ${field}.url`);
  else requireString(keys, has('server') ? 'server' : 'url', err, field);
  for (const key of ['arguments', 'headers']) {
    const value = keys.get(key);
    if (value !== undefined && value !== null && !asMap(value)) err(`${field}.${key} must be a map`, value);
  }
}

function checkFile(name: HostActionName, keys: Map<string, unknown>, err: Report, field: string): void {
  for (const key of FILE_KEYS[name]?.required ?? []) {
    if (key === 'content') {
      const content = keys.get('content');
      if (content === undefined || content === null) err(`${field}.content is required`);
      continue;
    }
    requireString(keys, key, err, field);
  }
  const source = keys.get('source');
  if (source !== undefined && source === keys.get('destination'))
    err(`${field}.destination must differ from ${field}.source`, source);
  const format = keys.get('format');
  if (format !== undefined && format !== null && format !== 'raw' && format !== 'json')
    err(`${field}.format must be raw or json`, format);
}
