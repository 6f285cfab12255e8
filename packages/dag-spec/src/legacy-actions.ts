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
