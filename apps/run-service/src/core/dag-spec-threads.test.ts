import { join } from 'node:path';
import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { clearDagSpecMemo, heldDagSpec } from './dag-spec-memo';
import { closeDagSpecThreads, parseDagSpecOffThread, useDagSpecThreads } from './dag-spec-threads';

/**
 * Large specs a run starts from are parsed on a thread with a time and heap budget, and
 * held for the engine's in-place look-ups. Real worker threads running
 * the TypeScript sources (the repo's SWC loader).
 */
const ROOT = join(__dirname, '..', '..', '..', '..');
const EXEC_ARGV = ['--require', join(ROOT, 'packages', 'bus', 'test-fixtures', 'ts-register.js')];
// A new thread compiles its sources first: seconds on a loaded machine.
const LIMITS = { threadMinChars: 1000, budgetMs: 60_000, memoryMb: 256, threads: 1 };
jest.setTimeout(120_000);

/** A valid DAG of `steps` steps (about 60 characters each). */
function bigSpec(steps: number): string {
  const lines = ['steps:'];
  for (let i = 0; i < steps; i += 1) lines.push(`  - name: s${i}`, `    command: echo "step [${i}]"`);
  return `${lines.join('\n')}\n`;
}

afterEach(async () => {
  await closeDagSpecThreads();
  clearDagSpecMemo();
});

describe('parseDagSpecOffThread', () => {
  it('parses a large spec on a thread, to parseDagSpec’s result, and holds it for in-place look-ups', async () => {
    useDagSpecThreads(LIMITS, EXEC_ARGV);
    const spec = bigSpec(300);
    const result = await parseDagSpecOffThread(spec, 'big');
    expect(result).toEqual(parseDagSpec(spec, { name: 'big' }));
    expect(result.dag?.steps).toHaveLength(300);
    expect(heldDagSpec(spec, 'big')).toBe(result);
    expect(Object.isFrozen(result.dag)).toBe(true);
    const invalid = `${spec}steps: again\n`;
    expect(await parseDagSpecOffThread(invalid, 'big')).toEqual(parseDagSpec(invalid, { name: 'big' }));
  });

  it('refuses a spec past the time budget as invalid, naming the bound, and parses the next on a new thread', async () => {
    useDagSpecThreads({ ...LIMITS, budgetMs: 1 }, EXEC_ARGV);
    const spec = bigSpec(400);
    expect(await parseDagSpecOffThread(spec, 'slow')).toEqual({
      valid: false,
      errors: ['invalid YAML: the spec took longer than 1 ms to parse (the parse time is bounded)'],
      warnings: [],
      subDags: [],
    });
    expect(heldDagSpec(spec, 'slow')).toBeUndefined();
  });

  it('parses small specs, texts the pre-scan refuses, and everything before useDagSpecThreads in place', async () => {
    const spec = bigSpec(100);
    expect(await parseDagSpecOffThread(spec, 'off')).toEqual(parseDagSpec(spec, { name: 'off' }));
    useDagSpecThreads({ ...LIMITS, budgetMs: 1 }, EXEC_ARGV);
    // A 1 ms budget would refuse any thread parse: these answers come from the event loop.
    expect((await parseDagSpecOffThread('steps:\n  - run: echo hi\n', 'small')).valid).toBe(true);
    const attack = `steps: ${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const refused = await parseDagSpecOffThread(attack, 'attack');
    expect(refused.valid).toBe(false);
    expect(refused.errors[0]).toMatch(/^invalid YAML: .*nest/);
  });
});
