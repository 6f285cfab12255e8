import { DEFAULT_SPEC_PARSE_LIMITS } from '../dags/spec-parsers';
import { loadDagConfig } from './dag-config';

/** `DAG_*` settings (CONTRIBUTING §8): defaults, the 0 that turns the cache off, and refusals naming the variable. */
describe('loadDagConfig', () => {
  it('defaults the spec cache TTL to 5000 ms and accepts 0 (cache off)', () => {
    expect(loadDagConfig({}).specCacheMs).toBe(5000);
    expect(loadDagConfig({ DAG_SPEC_CACHE_MS: '0' }).specCacheMs).toBe(0);
    expect(loadDagConfig({ DAG_SPEC_CACHE_MS: '250' }).specCacheMs).toBe(250);
  });

  it('defaults where specs are validated to the documented values, each settable', () => {
    expect(loadDagConfig({}).specParse).toEqual(DEFAULT_SPEC_PARSE_LIMITS);
    expect(
      loadDagConfig({
        DAG_PARSE_WORKER_MIN_BYTES: '0',
        DAG_PARSE_BUDGET_MS: '100',
        DAG_PARSE_MEMORY_MB: '64',
        DAG_PARSE_THREADS: '2',
      }).specParse,
    ).toEqual({ workerMinChars: 0, budgetMs: 100, memoryMb: 64, threads: 2 });
    expect(() => loadDagConfig({ DAG_PARSE_THREADS: '0' })).toThrow(/DAG_PARSE_THREADS/);
  });

  it.each(['-1', '1.5', 'soon'])('refuses DAG_SPEC_CACHE_MS=%s, naming the variable', (value) => {
    expect(() => loadDagConfig({ DAG_SPEC_CACHE_MS: value })).toThrow(/DAG_SPEC_CACHE_MS/);
  });
});
