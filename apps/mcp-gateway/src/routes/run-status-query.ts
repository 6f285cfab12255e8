import type { Request } from 'express';
import { DaguError, parseReadQuery, RUN_STATUS_LABELS } from '@dagu-mcp/contracts';

// The query strings of the REST run routes (runs.routes.ts), read with the 021 query parser.

/**
 * REST's `status` filter on `GET /api/v1/dag-runs` accepts the status labels of
 * dagu-model §1 (`status=failed`, `status=partially_succeeded`) as well as the
 * ints Dagu spec 021 defines for the `runs` query, and both as a comma-separated
 * list (`status=failed,aborted`). This rewrites the raw query string so every
 * `status` piece is one int the 021 parser accepts; anything else is left as it
 * is, so the parser still reports it on `status` with the 021 wording.
 *
 * Shapes: `"status=failed&limit=5"` → `"status=2&limit=5"`;
 * `"status=failed,aborted"` → `"status=2&status=3"`; `"status=x"` unchanged.
 * (docs/rest-api.md "DAG-runs": the REST API reads like one API.)
 */
export function statusLabelsToInts(queryText: string): string {
  if (queryText === '') return queryText;
  return queryText
    .split('&')
    .flatMap((piece) => {
      const eq = piece.indexOf('=');
      if (eq < 0 || decodeURIComponentSafe(piece.slice(0, eq)) !== 'status') return [piece];
      const values = decodeURIComponentSafe(piece.slice(eq + 1)).split(',');
      const ints = values.map((v) => {
        const i = (RUN_STATUS_LABELS as readonly string[]).indexOf(v.trim().toLowerCase());
        return i >= 0 ? String(i) : v.trim();
      });
      return ints.map((v) => `status=${encodeURIComponent(v)}`);
    })
    .join('&');
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * A REST query parsed with the 021 parser: a fault names the query parameter to blame as its
 * `field` (`status`, `tail`, …), as every REST input fault does (docs/rest-api.md), instead of
 * the tool's `query` field.
 * @throws DaguError `invalid_request` on the parameter (or `query` when none is to blame)
 */
export function restQuery<T extends Parameters<typeof parseReadQuery>[0]>(target: T, text: string) {
  try {
    return parseReadQuery(target, text, 'target');
  } catch (err) {
    if (!(err instanceof DaguError)) throw err;
    const parameter = err.details?.parameter;
    // REST's `status` also takes labels (statusLabelsToInts): say so, not only the 021 integers.
    const message =
      parameter === 'status'
        ? `${err.message.replace(/\.$/, '')}, or a status label: ${RUN_STATUS_LABELS.join(', ')}.`
        : err.message;
    throw new DaguError('invalid_request', message, {
      field: typeof parameter === 'string' ? parameter : 'query',
      ...(err.details !== undefined ? { details: err.details } : {}),
    });
  }
}

/** The raw query string of a request (the 021 query parsers take text, so repeated `status` keeps working). */
export function queryText(req: Request): string {
  const i = req.originalUrl.indexOf('?');
  return i < 0 ? '' : req.originalUrl.slice(i + 1);
}
