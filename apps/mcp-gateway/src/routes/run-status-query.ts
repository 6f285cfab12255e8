import { RUN_STATUS_LABELS } from '@dagu-mcp/contracts';

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
