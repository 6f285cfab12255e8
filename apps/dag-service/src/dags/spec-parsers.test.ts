import { join } from 'node:path';
import { DaguError } from '@dagu-mcp/contracts';
import { validateDagChange } from './dag-validation';
import { DEFAULT_SPEC_PARSE_LIMITS, SpecParsers, type SpecParseLimits } from './spec-parsers';

/**
 * Large specs are validated in a worker thread with a time and heap budget; small ones in-thread, as before. Real worker threads running the TypeScript
 * sources (the repo's SWC loader).
 */
const ROOT = join(__dirname, '..', '..', '..', '..');
const EXEC_ARGV = ['--require', join(ROOT, 'packages', 'bus', 'test-fixtures', 'ts-register.js')];
// A new thread compiles its sources first: seconds on a loaded machine.
const GENEROUS: SpecParseLimits = { ...DEFAULT_SPEC_PARSE_LIMITS, workerMinChars: 1000, budgetMs: 60_000 };
jest.setTimeout(120_000);

/** A valid DAG of `steps` steps (about 60 characters each). */
function bigSpec(steps: number): string {
  const lines = ['steps:'];
  for (let i = 0; i < steps; i += 1) lines.push(`  - name: s${i}`, `    command: echo "step [${i}]"`);
  return `${lines.join('\n')}\n`;
}

let parsers: SpecParsers | undefined;
afterEach(async () => {
  await parsers?.close();
  parsers = undefined;
});

describe('SpecParsers', () => {
  it('validates a large spec in a worker thread, with the answer of the in-thread validation', async () => {
    parsers = new SpecParsers(GENEROUS, EXEC_ARGV);
    const spec = bigSpec(200);
    expect(await parsers.validate('big', spec)).toEqual(validateDagChange('big', spec));
    const invalid = `${spec}steps: again\n`;
    expect(await parsers.validate('big', invalid)).toEqual(validateDagChange('big', invalid));
  });

  it('leaves the event loop free while a large spec is validated', async () => {
    parsers = new SpecParsers(GENEROUS, EXEC_ARGV);
    let turns = 0;
    let answered = false;
    const tick = (): void => {
      turns += 1;
      if (!answered) setImmediate(tick);
    };
    setImmediate(tick);
    // Synchronous validation would answer before the loop took a single turn.
    const check = await parsers.validate('big', bigSpec(2000));
    answered = true;
    expect(check.validation.valid).toBe(true);
    expect(turns).toBeGreaterThan(0);
  });

  it('ends a validation past its time budget and says which bound it passed', async () => {
    parsers = new SpecParsers({ ...GENEROUS, budgetMs: 1 }, EXEC_ARGV);
    expect(await parsers.validate('big', bigSpec(2000))).toEqual({
      validation: {
        valid: false,
        errors: ['invalid YAML: the spec took longer than 1 ms to validate (the validation time is bounded)'],
        errorLocations: [],
      },
      write: undefined,
    });
  });

  it('keeps a small spec in-thread and checks the name before sending a large one', async () => {
    // No loader: a spec sent to a thread would fail to compile there.
    parsers = new SpecParsers(DEFAULT_SPEC_PARSE_LIMITS);
    expect((await parsers.validate('small', bigSpec(10))).validation.valid).toBe(true);
    await expect(parsers.validate('bad name', bigSpec(2000))).rejects.toBeInstanceOf(DaguError);
  });
});
