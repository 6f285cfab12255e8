/**
 * Shapes shared by the action helper's modules (dagu-actions §1; the helper
 * is `action-main.ts`).
 */

/** A host action's resolved `with` map, as the helper reads it. */
export type WithMap = Readonly<Record<string, unknown>>;

/** What an action writes to the step's stdout: text or exact bytes (`file.read` raw). */
export interface ActionOutput {
  readonly stdout: string | Uint8Array;
  /** Set when the action failed after producing its output (a non-2xx `http.request`): the step's `error`. */
  readonly error?: string;
}

/** A failure whose message is the step's `error` as it stands (the spec's error texts). */
export class ActionError extends Error {}

/** The message of a thrown value. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A JSON object's entries by key (an object that is not an array), else undefined. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return Object.fromEntries(Object.entries(value));
}
