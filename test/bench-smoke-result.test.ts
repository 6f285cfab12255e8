import { smokeProblems, SMOKE_SCENARIOS, type ScenarioRecord, type SmokeResults } from './bench-smoke-result';

/** The verdict of the bench smoke test on results it must refuse (bench-smoke.test.ts applies it to a real run). */
function record(id: string, over: Partial<ScenarioRecord> = {}): ScenarioRecord {
  const checks: ScenarioRecord['checks'] = [{ label: 'p50', value: '1 ms', met: null }];
  // S1 and S2 also measure the stateless revision (issue 22).
  if (id === 'S1' || id === 'S2') checks.push({ label: '2026-07-28 (stateless): p50', value: '1 ms', met: null });
  return { id, status: 'ok', checks, figures: {}, ...over };
}

function results(scenarios: ScenarioRecord[]): SmokeResults {
  return { mode: 'smoke', machine: { cores: 2 }, scenarios };
}

const allOk = SMOKE_SCENARIOS.map((id) => record(id));

describe('smokeProblems', () => {
  it('accepts a run where every scenario has a record with checks, even with missed targets', () => {
    const missed = allOk.map((s) => ({ ...s, checks: s.checks.map((c) => ({ ...c, value: '9 ms', met: false })) }));
    expect(smokeProblems(results(missed))).toEqual([]);
  });

  it('refuses S1 or S2 without the 2026-07-28 measurement', () => {
    const legacyOnly = allOk.map((s) =>
      s.id === 'S2' ? record('S2', { checks: [{ label: 'p50', value: '1 ms', met: null }] }) : s,
    );
    expect(smokeProblems(results(legacyOnly))).toEqual(['S2 has no 2026-07-28 check']);
  });

  it.each(['B', 'S1', 'S2', 'S5', 'S7', 'S8', 'S10'])('refuses a run where %s errored, naming it', (id) => {
    const errored = allOk.map((s) =>
      s.id === id ? record(id, { status: 'error', error: 'Error: boom\n    at stack', checks: [] }) : s,
    );
    expect(smokeProblems(results(errored))).toEqual([`${id} errored: Error: boom`]);
  });

  it('refuses missing and unexpected records, an ok record without checks, and a wrong mode', () => {
    const scenarios = [...allOk.filter((s) => s.id !== 'S3'), record('S99')].map((s) =>
      s.id === 'S4' ? { ...s, checks: [] } : s,
    );
    expect(smokeProblems({ mode: 'full', machine: { cores: 0 }, scenarios })).toEqual([
      'mode is "full", not "smoke"',
      'machine.cores is not a positive number',
      'no record for S3',
      'unexpected records S99',
      'S4 has no checks',
    ]);
  });
});
