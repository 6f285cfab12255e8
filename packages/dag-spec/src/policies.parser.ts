/**
 * Step policies (dagu-model.md §3): `continue_on`, `retry_policy`,
 * `repeat_policy`, `preconditions`. Legacy camelCase keys inside them
 * (`exitCode`, `markSuccess`, `intervalSec`, …) are accepted.
 */
import type { ContinueOn, Precondition, RepeatPolicy, RetryPolicy } from './dag.types';
import type { ErrorSink } from './error-sink';
import { readKeys } from './keys';
import { asList, asMap, compact, scalarToString, toFiniteNumber, toNonNegativeInt } from './yaml-values';

/** `continue_on` when a step sets none. */
export function defaultContinueOn(): ContinueOn {
  return { failure: false, skipped: false, exitCode: [], output: [], markSuccess: false };
}

/** Reads a non-negative integer field (seconds, counts); records an error for anything else. */
export function readNonNegativeInt(value: unknown, field: string, sink: ErrorSink): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = toNonNegativeInt(value);
  if (n === undefined) sink.field(field, 'must be a non-negative integer', value);
  return n;
}

function readBool(value: unknown, field: string, sink: ErrorSink): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  sink.field(field, 'must be true or false', value);
  return false;
}

/** An exit code or a list of them → integers. */
export function readExitCodes(value: unknown, field: string, sink: ErrorSink): number[] {
  const out: number[] = [];
  for (const item of asList(value)) {
    const n = toFiniteNumber(item);
    if (n === undefined || !Number.isInteger(n)) sink.field(field, 'exit codes must be integers', item);
    else out.push(n);
  }
  return out;
}

/**
 * `continue_on`: `failed`/`failure`/`skipped`, or
 * `{failure, skipped, exit_code, output, mark_success}` (field `continue_on`).
 */
export function parseContinueOn(value: unknown, field: string, sink: ErrorSink): ContinueOn {
  const result = defaultContinueOn();
  if (typeof value === 'string') {
    if (value === 'failed' || value === 'failure') result.failure = true;
    else if (value === 'skipped') result.skipped = true;
    else sink.field(field, "must be 'failed', 'skipped' or a map", value);
    return result;
  }
  const map = asMap(value);
  if (!map) {
    if (value !== null && value !== undefined) sink.field(field, "must be 'failed', 'skipped' or a map", value);
    return result;
  }
  const spec = {
    allowed: ['failure', 'skipped', 'exit_code', 'output', 'mark_success'],
    aliases: { failed: 'failure' },
  };
  const keys = readKeys(map, spec, sink, `${field}.`);
  result.failure = readBool(keys.get('failure'), `${field}.failure`, sink);
  result.skipped = readBool(keys.get('skipped'), `${field}.skipped`, sink);
  result.exitCode = readExitCodes(keys.get('exit_code'), `${field}.exit_code`, sink);
  result.output = asList(keys.get('output')).map((item) => scalarToString(item) ?? '');
  result.markSuccess = readBool(keys.get('mark_success'), `${field}.mark_success`, sink);
  return result;
}

function readBackoff(value: unknown, field: string, sink: ErrorSink): number | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (value === true) return 2;
  const n = toFiniteNumber(value);
  if (n === undefined || n <= 1) sink.field(field, 'must be true or a multiplier greater than 1', value);
  return n !== undefined && n > 1 ? n : undefined;
}

/** `retry_policy`: `{limit, interval_sec, backoff, max_interval_sec, exit_code}`. */
export function parseRetryPolicy(value: unknown, field: string, sink: ErrorSink): RetryPolicy | undefined {
  const map = asMap(value);
  if (!map) {
    sink.field(field, 'must be a map', value);
    return undefined;
  }
  const spec = { allowed: ['limit', 'interval_sec', 'backoff', 'max_interval_sec', 'exit_code'] };
  const keys = readKeys(map, spec, sink, `${field}.`);
  return compact<RetryPolicy>({
    limit: readNonNegativeInt(keys.get('limit'), `${field}.limit`, sink) ?? 0,
    intervalSec: readNonNegativeInt(keys.get('interval_sec'), `${field}.interval_sec`, sink) ?? 0,
    backoff: readBackoff(keys.get('backoff'), `${field}.backoff`, sink),
    maxIntervalSec: readNonNegativeInt(keys.get('max_interval_sec'), `${field}.max_interval_sec`, sink),
    exitCodes: readExitCodes(keys.get('exit_code'), `${field}.exit_code`, sink),
  });
}

/**
 * `repeat_policy`: `{repeat: true|while|until, interval_sec, limit, condition,
 * expected, exit_code, backoff, max_interval_sec}`. Without `repeat` the mode
 * is inferred as Dagu does: `condition` + `expected` → until, otherwise while.
 * `repeat: false` means no policy.
 */
export function parseRepeatPolicy(value: unknown, field: string, sink: ErrorSink): RepeatPolicy | undefined {
  const map = asMap(value);
  if (!map) {
    sink.field(field, 'must be a map', value);
    return undefined;
  }
  const allowed = [
    'repeat',
    'interval_sec',
    'limit',
    'condition',
    'expected',
    'exit_code',
    'backoff',
    'max_interval_sec',
  ];
  const keys = readKeys(map, { allowed }, sink, `${field}.`);
  const repeat = keys.get('repeat');
  const condition = scalarToString(keys.get('condition'));
  const expected = scalarToString(keys.get('expected'));
  const exitCodes = readExitCodes(keys.get('exit_code'), `${field}.exit_code`, sink);
  if (repeat === false) return undefined;
  let mode: RepeatPolicy['mode'] | undefined;
  if (repeat === true || repeat === 'while') mode = 'while';
  else if (repeat === 'until') mode = 'until';
  else if (repeat !== undefined) sink.field(`${field}.repeat`, "must be true, 'while' or 'until'", repeat);
  else if (condition !== undefined) mode = expected !== undefined ? 'until' : 'while';
  else if (exitCodes.length > 0) mode = 'while';
  else sink.field(field, 'needs repeat, condition or exit_code', value);
  if (mode === undefined) return undefined;
  return compact<RepeatPolicy>({
    mode,
    intervalSec: readNonNegativeInt(keys.get('interval_sec'), `${field}.interval_sec`, sink) ?? 0,
    limit: readNonNegativeInt(keys.get('limit'), `${field}.limit`, sink),
    condition,
    expected,
    exitCodes,
    backoff: readBackoff(keys.get('backoff'), `${field}.backoff`, sink),
    maxIntervalSec: readNonNegativeInt(keys.get('max_interval_sec'), `${field}.max_interval_sec`, sink),
  });
}

/** `preconditions`: a command string, a `{condition, expected, negate}` map, or a list of either. */
export function parsePreconditions(value: unknown, field: string, sink: ErrorSink): Precondition[] {
  const out: Precondition[] = [];
  asList(value).forEach((item: unknown, index: number) => {
    const itemField = Array.isArray(value) ? `${field}[${index}]` : field;
    const map = asMap(item);
    if (typeof item === 'string') {
      out.push({ condition: item });
      return;
    }
    if (!map) return sink.field(itemField, 'must be a string or a {condition, expected} map', item);
    const keys = readKeys(map, { allowed: ['condition', 'expected', 'negate'] }, sink, `${itemField}.`);
    const condition = scalarToString(keys.get('condition'));
    if (condition === undefined || condition === '') {
      return sink.field(`${itemField}.condition`, 'condition is required', keys.get('condition'));
    }
    const negate = keys.get('negate');
    out.push(
      compact<Precondition>({
        condition,
        expected: keys.has('expected') ? scalarToString(keys.get('expected')) : undefined,
        negate: negate === undefined ? undefined : readBool(negate, `${itemField}.negate`, sink),
      }),
    );
  });
  return out;
}
