import { NextRunCalculator, splitTimezone } from './next-run';

/** Next runs of `dag.list` / `dag.get` (`nextRun`, RFC 3339 ms UTC) and `sort=nextRun`. */
describe('NextRunCalculator', () => {
  const now = new Date('2030-01-01T10:30:00.000Z');

  it('returns the next start strictly after now, in the CRON_TZ zone', () => {
    const calculator = new NextRunCalculator();
    expect(calculator.nextRunOf(['CRON_TZ=UTC 0 * * * *'], now)?.toISOString()).toBe('2030-01-01T11:00:00.000Z');
    expect(calculator.nextRunOf(['CRON_TZ=UTC 30 10 * * *'], now)?.toISOString()).toBe('2030-01-02T10:30:00.000Z');
    expect(calculator.nextRunOf(['CRON_TZ=Asia/Tokyo 0 0 * * *'], now)?.toISOString()).toBe('2030-01-01T15:00:00.000Z');
  });

  it('takes the earliest of several expressions', () => {
    const calculator = new NextRunCalculator();
    const schedule = ['CRON_TZ=UTC 0 0 * * *', 'CRON_TZ=UTC */15 * * * *', 'CRON_TZ=UTC 0 12 * * *'];
    expect(calculator.nextRunOf(schedule, now)?.toISOString()).toBe('2030-01-01T10:45:00.000Z');
  });

  it('has no next run for an empty schedule or an expression that does not parse', () => {
    const calculator = new NextRunCalculator();
    expect(calculator.nextRunOf([], now)).toBeUndefined();
    expect(calculator.nextRunOf(['not a cron'], now)).toBeUndefined();
    expect(calculator.nextRunOf(['not a cron', 'CRON_TZ=UTC 0 * * * *'], now)?.toISOString()).toBe(
      '2030-01-01T11:00:00.000Z',
    );
  });

  it('reads an expression without a zone in the local time zone', () => {
    const calculator = new NextRunCalculator();
    const next = calculator.nextRunOf(['0 3 * * *'], now);
    expect(next?.getHours()).toBe(3);
    expect(next?.getMinutes()).toBe(0);
    expect((next?.getTime() ?? 0) - now.getTime()).toBeLessThanOrEqual(24 * 3600 * 1000);
  });

  it('stays exact while reusing its cache: later and earlier reference times', () => {
    const calculator = new NextRunCalculator();
    const hourly = ['CRON_TZ=UTC 0 * * * *'];
    expect(calculator.nextRunOf(hourly, now)?.toISOString()).toBe('2030-01-01T11:00:00.000Z');
    expect(calculator.nextRunOf(hourly, new Date('2030-01-01T10:59:59.999Z'))?.toISOString()).toBe(
      '2030-01-01T11:00:00.000Z',
    );
    expect(calculator.nextRunOf(hourly, new Date('2030-01-01T11:00:00.000Z'))?.toISOString()).toBe(
      '2030-01-01T12:00:00.000Z',
    );
    expect(calculator.nextRunOf(hourly, new Date('2030-01-01T08:10:00.000Z'))?.toISOString()).toBe(
      '2030-01-01T09:00:00.000Z',
    );
  });

  it('keeps working when the cache is emptied for being full', () => {
    const calculator = new NextRunCalculator(2);
    for (let minute = 0; minute < 10; minute += 1) {
      expect(calculator.nextRunOf([`CRON_TZ=UTC ${minute} 0 * * *`], now)?.toISOString()).toBe(
        `2030-01-02T00:0${minute}:00.000Z`,
      );
    }
  });
});

describe('splitTimezone', () => {
  it.each([
    ['0 * * * *', { pattern: '0 * * * *', timezone: undefined }],
    ['CRON_TZ=Europe/Paris 0 * * * *', { pattern: '0 * * * *', timezone: 'Europe/Paris' }],
    ['  TZ=UTC   5 4 * * 1 ', { pattern: '5 4 * * 1', timezone: 'UTC' }],
  ])('%s', (expression, expected) => {
    expect(splitTimezone(expression)).toEqual(expected);
  });
});
