import type { HostAction, JsonValue } from '@dagu-mcp/dag-spec';
import { interpolate, type InterpolationScope } from '../core/interpolate';

/**
 * The `with` map of a host action as the helper gets it (dagu-actions §1.1):
 * every string, nested ones too, gets one round of `${...}` resolution on the
 * host (plain text: no shell runs), except `template.render`'s template text
 * and a `jq.filter` filter when `with.args` is set. `template_ref` is resolved
 * once and becomes `template` (§1.7); `jq.filter` `args` keys lose their one
 * leading `$` and keep their YAML types (§1.3).
 *
 * @throws Error `with.template_ref resolved to an empty value` (§1.7: it must resolve to a non-empty string)
 */
export function resolveHostActionWith(action: HostAction, scope: InterpolationScope): Record<string, unknown> {
  const resolve = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return interpolate(value, scope, 'plain');
    if (Array.isArray(value)) return value.map(resolve);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    return value;
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(action.with)) {
    if (action.type === 'template.render' && key === 'template') out[key] = value;
    else if (action.type === 'jq.filter' && key === 'filter' && action.with.args !== undefined) out[key] = value;
    else if (action.type === 'jq.filter' && key === 'args') out[key] = jqArgs(resolve(value));
    else out[key] = resolve(value);
  }
  if (action.type === 'template.render' && typeof out.template_ref === 'string') {
    const text = out.template_ref;
    if (text === '' || text === action.with.template_ref)
      throw new Error(
        `with.template_ref ${JSON.stringify(action.with.template_ref)} resolved to an empty or unknown value`,
      );
    out.template = text;
    delete out.template_ref;
  }
  return out;
}

function jqArgs(value: JsonValue): Record<string, JsonValue> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.startsWith('$') ? k.slice(1) : k, v]));
}
