import { loadRunConfig } from './run-config';
import { parseQueueList, queueLimits } from './queue-limits';

describe('RUN_QUEUES parsing', () => {
  it('reads name:limit entries', () => {
    expect([...parseQueueList('default:4, nightly:1')]).toEqual([
      ['default', 4],
      ['nightly', 1],
    ]);
  });

  it('accepts an empty list', () => {
    expect(parseQueueList('').size).toBe(0);
    expect(parseQueueList(' , ').size).toBe(0);
  });

  it.each(['nightly:0', 'nightly', 'nightly:x', 'a b:1', ':2'])('rejects %s', (text) => {
    expect(() => parseQueueList(text)).toThrow(/bad queue entry/);
  });

  it('rejects a repeated name', () => {
    expect(() => parseQueueList('a:1,a:2')).toThrow(/listed twice/);
  });

  it('falls back for queues not listed', () => {
    const limits = queueLimits(parseQueueList('nightly:1'), 8);
    expect(limits.limitOf('nightly')).toBe(1);
    expect(limits.limitOf('default')).toBe(8);
    expect(limits.limitOf('other')).toBe(8);
  });
});

describe('RUN_QUEUES in the run config', () => {
  it('is parsed into the named queues', () => {
    expect([...loadRunConfig({ RUN_QUEUES: 'default:4,nightly:1' }).queues]).toEqual([
      ['default', 4],
      ['nightly', 1],
    ]);
  });

  it('fails the start on a bad entry, naming the variable', () => {
    expect(() => loadRunConfig({ RUN_QUEUES: 'nightly:0' })).toThrow(/RUN_QUEUES/);
  });
});
