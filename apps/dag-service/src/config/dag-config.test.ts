import { loadDagConfig } from './dag-config';

/** `DAG_*` settings (CONTRIBUTING §8): defaults, the 0 that turns the cache off, and refusals naming the variable. */
describe('loadDagConfig', () => {
  it('defaults the spec cache TTL to 5000 ms and accepts 0 (cache off)', () => {
    expect(loadDagConfig({})).toEqual({ specCacheMs: 5000 });
    expect(loadDagConfig({ DAG_SPEC_CACHE_MS: '0' })).toEqual({ specCacheMs: 0 });
    expect(loadDagConfig({ DAG_SPEC_CACHE_MS: '250' })).toEqual({ specCacheMs: 250 });
  });

  it.each(['-1', '1.5', 'soon'])('refuses DAG_SPEC_CACHE_MS=%s, naming the variable', (value) => {
    expect(() => loadDagConfig({ DAG_SPEC_CACHE_MS: value })).toThrow(/DAG_SPEC_CACHE_MS/);
  });
});
