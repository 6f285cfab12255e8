/**
 * What the bench smoke test accepts of `bench/run.mjs --smoke`'s results
 * (smoke.json): every scenario has a record, none errored, and each record
 * holds figures. Missed speed targets are not faults here (a smoke run on a
 * shared CI host proves the harness works, not how fast it is). Kept apart
 * from the test so its verdict on a bad result is tested without a stack.
 */

/** One scenario record of smoke.json. */
export interface ScenarioRecord {
  id: string;
  status: 'ok' | 'error';
  error?: string;
  checks: Array<{ label: string; value: string; met: boolean | null }>;
  figures: Record<string, unknown>;
}

/** The parts of smoke.json the verdict reads. */
export interface SmokeResults {
  mode: string;
  scenarios: ScenarioRecord[];
  machine: { cores: number };
}

/** The scenarios a smoke run must record, in order. */
export const SMOKE_SCENARIOS = ['B', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7', 'S8', 'S9', 'S10'] as const;

/**
 * Everything wrong with a smoke run's results, one line each (the first line
 * of a scenario's error); empty when the run is acceptable.
 */
export function smokeProblems(results: SmokeResults): string[] {
  const problems: string[] = [];
  if (results.mode !== 'smoke') problems.push(`mode is ${JSON.stringify(results.mode)}, not "smoke"`);
  if (!(results.machine.cores > 0)) problems.push('machine.cores is not a positive number');
  const ids = results.scenarios.map((s) => s.id);
  const missing = SMOKE_SCENARIOS.filter((id) => !ids.includes(id));
  if (missing.length > 0) problems.push(`no record for ${missing.join(', ')}`);
  const unexpected = ids.filter((id) => !(SMOKE_SCENARIOS as readonly string[]).includes(id));
  if (unexpected.length > 0) problems.push(`unexpected records ${unexpected.join(', ')}`);
  for (const s of results.scenarios) {
    if (s.status !== 'ok') {
      const first = (s.error ?? 'no error text').split('\n')[0] ?? '';
      problems.push(`${s.id} errored: ${first}`);
    } else if (s.checks.length === 0) {
      problems.push(`${s.id} has no checks`);
    } else if ((s.id === 'S1' || s.id === 'S2') && !s.checks.some((c) => c.label.startsWith('2026-07-28'))) {
      // Issue 22: S1 and S2 are measured in the stateless revision too, side by side.
      problems.push(`${s.id} has no 2026-07-28 check`);
    }
  }
  return problems;
}
