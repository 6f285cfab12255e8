import { randomBytes } from 'node:crypto';
import { formatDaguUri } from '@dagu-mcp/contracts';

/**
 * Identity of runs: generated DAG-run and attempt ids, and run URIs.
 *
 * Generated DAG-run and attempt ids (036 "Generated run ids are unique,
 * URL-safe and sortable by creation time"; dagu-model §2).
 *
 * Shape: `<UTC time>-<random>`, e.g. `20261129T125500123Z-k3v9q2mx7d`:
 * - the time is `YYYYMMDDTHHMMSSmmmZ` (UTC, milliseconds), fixed width, so
 *   ids sort by creation time as plain strings (ties within one millisecond
 *   in random order);
 * - the random part is 10 characters of lower-case base32 (50 bits), so two
 *   ids of the same millisecond collide with odds of about 1 in 10^15.
 *
 * 30 characters, all in `[0-9a-zA-Z-]`: inside `^[-a-zA-Z0-9_]+$` and the
 * 64-character limit.
 */

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RANDOM_CHARS = 10;

/** The pattern every DAG-run id must match (dagu-model §2). */
export const DAG_RUN_ID_PATTERN = /^[-a-zA-Z0-9_]+$/;
/** Longest DAG-run id (dagu-model §2). */
export const DAG_RUN_ID_MAX_LENGTH = 64;

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** `YYYYMMDDTHHMMSSmmmZ` of `at` in UTC. */
export function formatIdTime(at: Date): string {
  return (
    `${pad(at.getUTCFullYear(), 4)}${pad(at.getUTCMonth() + 1, 2)}${pad(at.getUTCDate(), 2)}` +
    `T${pad(at.getUTCHours(), 2)}${pad(at.getUTCMinutes(), 2)}${pad(at.getUTCSeconds(), 2)}` +
    `${pad(at.getUTCMilliseconds(), 3)}Z`
  );
}

/** `count` random characters of {@link ALPHABET}. */
function randomPart(count: number, source: (size: number) => Buffer): string {
  const bytes = source(count);
  let out = '';
  for (let i = 0; i < count; i++) out += ALPHABET.charAt((bytes[i] ?? 0) % ALPHABET.length);
  return out;
}

/**
 * A new run id.
 *
 * @param at     creation time (default now)
 * @param source random bytes (default `crypto.randomBytes`; tests pass a fixed one)
 * @returns e.g. `20261129T125500123Z-k3v9q2mx7d` (30 chars)
 */
export function generateRunId(at: Date = new Date(), source: (size: number) => Buffer = randomBytes): string {
  return `${formatIdTime(at)}-${randomPart(RANDOM_CHARS, source)}`;
}

/** A new attempt id: same shape as a run id (unique, time-sortable). */
export function generateAttemptId(at: Date = new Date()): string {
  return generateRunId(at);
}

/** True when `id` is a valid DAG-run id (pattern and length of dagu-model §2). */
export function isValidDagRunId(id: string): boolean {
  return id.length <= DAG_RUN_ID_MAX_LENGTH && DAG_RUN_ID_PATTERN.test(id);
}

/**
 * The canonical `dagu://` URIs of a run (spec 020/021, via `formatDaguUri`):
 * the run, its logs, a step's log.
 */
export const formatUri = {
  /** `dagu://runs/{name}/{dagRunId}`. */
  run: (name: string, dagRunId: string): string => formatDaguUri({ kind: 'run', name, dagRunId }),
  /** `dagu://runs/{name}/{dagRunId}/logs`. */
  runLogs: (name: string, dagRunId: string): string => formatDaguUri({ kind: 'run_logs', name, dagRunId }),
  /** `dagu://runs/{name}/{dagRunId}/steps/{stepName}/logs`. */
  stepLog: (name: string, dagRunId: string, stepName: string): string =>
    formatDaguUri({ kind: 'step_log', name, dagRunId, stepName }),
};
