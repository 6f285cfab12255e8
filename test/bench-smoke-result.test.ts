import { smokeProblems, SMOKE_SCENARIOS, type ScenarioRecord, type SmokeResults } from './bench-smoke-result';

/** The verdict of the bench smoke test on results it must refuse (bench-smoke.test.ts applies it to a real run). */
function record(id: string, over: Partial<ScenarioRecord> = {}): ScenarioRecord {
  return { id, status: 'ok', checks: [{ label: 'p50', value: '1 ms', met: null }], figures: {}, ...over };
}

function results(scenarios: ScenarioRecord[]): SmokeResults {
  return { mode: 'smoke', machine: { cores: 2 }, scenarios };
}

const allOk = SMOKE_SCENARIOS.map((id) => record(id));

describe('smokeProblems', () => {
  it('accepts a run where every scenario has a record with checks, even with missed targets', () => {
    const missed = allOk.map((s) => ({ ...s, checks: [{ label: 'p50', value: '9 ms', met: false }] }));
    expect(smokeProblems(results(missed))).toEqual([]);
  });

  it.each(['B', 'S1', 'S2', 'S5', 'S7'])('refuses a run where %s errored, naming it', (id) => {
    const errored = allOk.map((s) =>
      s.id === id ? record(id, { status: 'error', error: 'Error: boom\n    at stack', checks: [] }) : s,
    );
    expect(smokeProblems(results(errored))).toEqual([`${id} errored: Error: boom`]);
  });

  it('refuses missing and unexpected records, an ok record without checks, and a wrong mode', () => {
    const scenarios = [...allOk.filter((s) => s.id !== 'S3'), record('S9')].map((s) =>
      s.id === 'S4' ? { ...s, checks: [] } : s,
    );
    expect(smokeProblems({ mode: 'full', machine: { cores: 0 }, scenarios })).toEqual([
      'mode is "full", not "smoke"',
      'machine.cores is not a positive number',
      'no record for S3',
      'unexpected records S9',
      'S4 has no checks',
    ]);
  });
});
