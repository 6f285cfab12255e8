import { DaguError } from '@dagu-mcp/contracts';
import { dagNotFoundError, MAX_SUGGESTIONS, suggestDagNames } from './did-you-mean';

/** Spec 036 "Errors", did-you-mean: case-insensitive Levenshtein, substring = 1, threshold, order, top 3. */
describe('suggestDagNames', () => {
  const names = ['nightly-report', 'nightly-backup', 'weekly-report', 'etl', 'x', 'hourly-sync'];

  it('suggests a name one typo away', () => {
    expect(suggestDagNames('nightly-reprot', names)).toEqual(['nightly-report']);
  });

  it('compares case-insensitively; a case-only difference scores 0 and comes first', () => {
    expect(suggestDagNames('Nightly-Report', ['nightly-reports', 'nightly-report'])).toEqual([
      'nightly-report',
      'nightly-reports',
    ]);
  });

  it('skips the exact name itself', () => {
    expect(suggestDagNames('etl', ['etl'])).toEqual([]);
  });

  it('scores a substring match 1, in either direction', () => {
    // 'nightly' is inside both nightly-* names (distance 7 would be far over the threshold of 2).
    expect(suggestDagNames('nightly', names)).toEqual(['nightly-backup', 'nightly-report']);
    // 'etl' is inside the longer name asked for.
    expect(suggestDagNames('daily-etl-job', names)).toEqual(['etl']);
  });

  it('does not treat a contained string shorter than 3 characters as a substring match', () => {
    expect(suggestDagNames('xylophone-runner', names)).toEqual([]);
  });

  it('keeps scores up to max(2, floor(len / 3)) only', () => {
    // len 6 → threshold 2: distance 2 kept, distance 3 dropped.
    expect(suggestDagNames('abcdef', ['abcdxy', 'abcxyz'])).toEqual(['abcdxy']);
    // len 12 → threshold 4: distance 4 kept, 5 dropped.
    expect(suggestDagNames('abcdefghijkl', ['abcdefghwxyz', 'abcdefgvwxyz'])).toEqual(['abcdefghwxyz']);
  });

  it('sorts by score, then by name, and returns at most 3', () => {
    const candidates = ['report-d', 'report-b', 'report-a', 'report-c', 'report-ab'];
    // 'report-' is a substring of all (score 1): alphabetical order, first three.
    expect(suggestDagNames('report-', candidates)).toEqual(['report-a', 'report-ab', 'report-b']);
    // Score before name: distance 1 and substring (1) beat distance 2, whatever their names.
    expect(suggestDagNames('abcdefgh', ['aacdefgz', 'zbcdefgh', 'abcdefgh-x'])).toEqual([
      'abcdefgh-x',
      'zbcdefgh',
      'aacdefgz',
    ]);
    expect(MAX_SUGGESTIONS).toBe(3);
  });

  it('ignores duplicate candidates and an empty candidate list', () => {
    expect(suggestDagNames('etl1', ['etl', 'etl', 'etl'])).toEqual(['etl']);
    expect(suggestDagNames('anything', [])).toEqual([]);
  });
});

describe('dagNotFoundError', () => {
  it('is resource_not_found with the spec message and details.didYouMean', () => {
    const error = dagNotFoundError('nightly-reprot', ['nightly-report', 'weekly-report']);
    expect(error).toBeInstanceOf(DaguError);
    expect(error.toServiceError()).toEqual({
      code: 'resource_not_found',
      message: 'DAG "nightly-reprot" does not exist.',
      details: { didYouMean: ['nightly-report'] },
    });
  });

  it('has no details when no name is close', () => {
    expect(dagNotFoundError('zzz', ['nightly-report']).toServiceError()).toEqual({
      code: 'resource_not_found',
      message: 'DAG "zzz" does not exist.',
    });
  });
});
