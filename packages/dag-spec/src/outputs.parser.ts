/**
 * Step `outputs`, `output` and `approval` (dagu-model.md §3).
 * - `outputs`: names the step writes to `$DAGU_OUTPUT_FILE` as `KEY=value`
 *   (strings or `{name, description}` maps), read as `${steps.<id>.outputs.<name>}`.
 * - `output`: a variable name taking the trimmed stdout (`${NAME}`), or a map
 *   `name → {from: stdout|stderr, decode: json, select: .path}` read as
 *   `${<id>.output.<name>}`.
 * - `approval`: `{prompt, input, required, rewind_to}`.
 */
import type { ApprovalSpec, OutputField, StepOutput } from './dag.types';
import type { ErrorSink } from './error-sink';
import { isReservedValueName, reservedNameMessage } from './reserved-names';
import { readKeys } from './keys';
import { asList, asMap, compact } from './yaml-values';

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `outputs` → list of names; errors for malformed entries and names. */
export function parseOutputs(value: unknown, sink: ErrorSink): string[] {
  const out: string[] = [];
  asList(value).forEach((item: unknown, index: number) => {
    const field = `outputs[${index}]`;
    const map = asMap(item);
    let name: unknown = item;
    if (map) name = readKeys(map, { allowed: ['name', 'description'] }, sink, `${field}.`).get('name');
    if (typeof name !== 'string' || !VAR_NAME.test(name)) sink.field(field, 'output name must be an identifier', name);
    else if (out.includes(name)) sink.field(field, 'duplicate output name', name);
    else if (isReservedValueName(name)) sink.field(field, reservedNameMessage(name), name);
    else out.push(name);
  });
  return out;
}

/** `output` → a variable or named fields; errors name `output` or `output.<name>.<key>`. */
export function parseOutput(value: unknown, sink: ErrorSink): StepOutput | undefined {
  if (typeof value === 'string') {
    const name = value.startsWith('$') ? value.slice(1) : value;
    if (isReservedValueName(name)) {
      sink.field('output', reservedNameMessage(name), value);
      return undefined;
    }
    if (VAR_NAME.test(name)) return { kind: 'variable', name };
    sink.field('output', 'output name must be an identifier', value);
    return undefined;
  }
  const map = asMap(value);
  if (!map || map.size === 0) {
    sink.field('output', 'must be a variable name or a map of output fields', value);
    return undefined;
  }
  const fields: OutputField[] = [];
  for (const [name, spec] of map) {
    const field = `output.${name}`;
    const specMap = asMap(spec);
    if (!VAR_NAME.test(name)) sink.field(field, 'output name must be an identifier', name);
    else if (isReservedValueName(name)) sink.field(field, reservedNameMessage(name), name);
    if (!specMap) {
      sink.field(field, 'must be a map {from, decode, select}', spec);
      continue;
    }
    const keys = readKeys(specMap, { allowed: ['from', 'decode', 'select'] }, sink, `${field}.`);
    const from = keys.get('from') ?? 'stdout';
    const decode = keys.get('decode');
    const select = keys.get('select');
    if (from !== 'stdout' && from !== 'stderr') sink.field(`${field}.from`, "must be 'stdout' or 'stderr'", from);
    if (decode !== undefined && decode !== 'json') sink.field(`${field}.decode`, "must be 'json'", decode);
    if (select !== undefined && typeof select !== 'string') sink.field(`${field}.select`, 'must be a string', select);
    if (select !== undefined && decode === undefined) sink.field(`${field}.select`, 'requires decode: json', select);
    fields.push(
      compact<OutputField>({
        name,
        from: from === 'stderr' ? 'stderr' : 'stdout',
        decode: decode === 'json' ? 'json' : undefined,
        select: typeof select === 'string' ? select : undefined,
      }),
    );
  }
  return { kind: 'fields', fields };
}

function readNames(value: unknown, field: string, sink: ErrorSink): string[] {
  const out: string[] = [];
  for (const item of asList(value)) {
    if (typeof item === 'string' && isReservedValueName(item)) sink.field(field, reservedNameMessage(item), item);
    else if (typeof item === 'string' && VAR_NAME.test(item)) out.push(item);
    else sink.field(field, 'must be a list of input names', item);
  }
  return out;
}

/** `approval` (null or `{}` = a plain approval gate). `rewind_to` is checked later against step names. */
export function parseApproval(value: unknown, sink: ErrorSink): ApprovalSpec | undefined {
  if (value === null) return { input: [], required: [] };
  const map = asMap(value);
  if (!map) {
    sink.field('approval', 'must be a map {prompt, input, required, rewind_to}', value);
    return undefined;
  }
  const keys = readKeys(map, { allowed: ['prompt', 'input', 'required', 'rewind_to'] }, sink, 'approval.');
  const prompt = keys.get('prompt');
  const rewindTo = keys.get('rewind_to');
  if (prompt !== undefined && typeof prompt !== 'string') sink.field('approval.prompt', 'must be a string', prompt);
  if (rewindTo !== undefined && typeof rewindTo !== 'string') {
    sink.field('approval.rewind_to', 'must be a step name or id', rewindTo);
  }
  return compact<ApprovalSpec>({
    prompt: typeof prompt === 'string' ? prompt : undefined,
    input: readNames(keys.get('input'), 'approval.input', sink),
    required: readNames(keys.get('required'), 'approval.required', sink),
    rewindTo: typeof rewindTo === 'string' ? rewindTo : undefined,
  });
}
