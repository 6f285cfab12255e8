/**
 * The legacy and typed-executor forms of the host actions, normalised to the
 * action form (dagu-actions §1.1): `executor: jq` (or `{type: jq, config}`)
 * and step `type: jq` with `config:` / `with:`. `config` keys keep their
 * camelCase spelling here; the action's key check maps them to snake_case.
 *
 * | legacy type | action | `command` | `script` |
 * | --- | --- | --- | --- |
 * | `jq` | `jq.filter` | `filter` (default `.`) | `data` |
 * | `docker`, `container` | `docker.run` | `command` | — |
 * | `template` | `template.render` | — | `template` |
 * | `file` | `file.<command>` | the verb | — |
 * | `http` | `http.request` | `<METHOD> <URL>` | JSON settings (older docs) |
 *
 * Docker's `host.binds` become `volumes`.
 */
import { asMap, scalarToString, type YamlMap } from './yaml-values';

/** A legacy step as an action: its name, its `with` map, the field errors name, or why it cannot be one. */
export interface LegacyAction {
  readonly name: string;
  readonly with: YamlMap;
  /** `config` (legacy) or `with` (typed form). */
  readonly field: string;
  readonly error?: string;
}

const ACTION_OF_TYPE: Readonly<Record<string, string>> = {
  jq: 'jq.filter',
  docker: 'docker.run',
  container: 'docker.run',
  template: 'template.render',
  file: 'file',
  http: 'http.request',
};
const FILE_VERBS = ['stat', 'read', 'write', 'copy', 'move', 'delete', 'mkdir', 'list'];

/**
 * The action form of a step whose `executor` / `type` is `type`, or
 * `undefined` when `type` has no legacy form here (the caller refuses it).
 *
 * @param executorValue the `executor` (or `type`) value as written: a string or `{type, config}`
 * @param keys the step's keys (`command`, `script`, `config`, `with`)
 */
export function legacyActionOf(
  type: string,
  executorValue: unknown,
  keys: Map<string, unknown>,
): LegacyAction | undefined {
  const base = ACTION_OF_TYPE[type];
  if (base === undefined) return undefined;
  const executorConfig = asMap(asMap(executorValue)?.get('config'));
  const stepConfig = asMap(keys.get('config'));
  const typed = asMap(keys.get('with'));
  const field = typed !== undefined && executorConfig === undefined && stepConfig === undefined ? 'with' : 'config';
  const map: YamlMap = new Map([...(executorConfig ?? []), ...(stepConfig ?? []), ...(typed ?? [])]);
  const command = keys.get('command');
  const script = keys.get('script');
  if (base === 'jq.filter') {
    if (!map.has('filter')) map.set('filter', command === undefined || command === null ? '.' : command);
    if (script !== undefined && !map.has('data')) map.set('data', script);
    return { name: base, with: map, field };
  }
  if (base === 'http.request') return legacyHttp(map, command, script, field);
  if (base === 'docker.run') {
    const binds = asMap(map.get('host'))?.get('binds');
    map.delete('host');
    if (binds !== undefined && !map.has('volumes')) map.set('volumes', binds);
    if (command !== undefined && !map.has('command')) map.set('command', command);
    return { name: base, with: map, field };
  }
  if (base === 'template.render') {
    if (script !== undefined && !map.has('template')) map.set('template', script);
    return { name: base, with: map, field };
  }
  const verb = scalarToString(command)?.trim() ?? '';
  if (!FILE_VERBS.includes(verb))
    return {
      name: base,
      with: map,
      field: 'command',
      error: `file executor needs command: one of ${FILE_VERBS.join(', ')}`,
    };
  return { name: `file.${verb}`, with: map, field };
}

/** `command: "GET https://…"` → method and url; a JSON `script` holds settings (`headers`, `query`, `body`, `timeout`, `silent`). */
function legacyHttp(map: YamlMap, command: unknown, script: unknown, field: string): LegacyAction {
  const text = scalarToString(command)?.trim() ?? '';
  const [method, url, ...extra] = text.split(/\s+/);
  if (text !== '' && (url === undefined || extra.length > 0))
    return {
      name: 'http.request',
      with: map,
      field: 'command',
      error: 'http executor needs command: "<METHOD> <URL>"',
    };
  if (typeof script === 'string' && script.trim() !== '') {
    let settings: unknown;
    try {
      settings = JSON.parse(script);
    } catch {
      return {
        name: 'http.request',
        with: map,
        field: 'script',
        error: 'http executor script must be a JSON object of settings',
      };
    }
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings))
      return {
        name: 'http.request',
        with: map,
        field: 'script',
        error: 'http executor script must be a JSON object of settings',
      };
    for (const [key, value] of Object.entries(settings)) if (!map.has(key)) map.set(key, toYaml(value));
  }
  if (method !== undefined && method !== '' && !map.has('method')) map.set('method', method);
  if (url !== undefined && !map.has('url')) map.set('url', url);
  return { name: 'http.request', with: map, field };
}

/** A JSON value in the shape the YAML parser gives (objects as `Map`s). */
function toYaml(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toYaml);
  if (value !== null && typeof value === 'object')
    return new Map(Object.entries(value).map(([k, v]) => [k, toYaml(v)]));
  return value;
}
