import { compileSchedule, isTick, nextTickAfter, scheduledRunId, splitTimezone, ticksBetween } from './cron-ticks';

const at = (iso: string): number => Date.parse(iso);

describe('scheduler cron arithmetic', () => {
  it('finds the minutes of an every-minute schedule in a window, end inclusive', () => {
    const ticks = ticksBetween(
      compileSchedule(['* * * * *'], 'UTC'),
      at('2026-11-29T10:00:00Z'),
      at('2026-11-29T10:02:00Z'),
    );
    expect(ticks.map((t) => t.toISOString())).toEqual(['2026-11-29T10:01:00.000Z', '2026-11-29T10:02:00.000Z']);
  });

  it('reads expressions in the configured zone unless they carry CRON_TZ', () => {
    const from = at('2026-11-29T00:00:00Z');
    const to = at('2026-11-30T00:00:00Z');
    expect(ticksBetween(compileSchedule(['0 9 * * *'], 'UTC'), from, to).map(String)).toEqual([
      String(new Date('2026-11-29T09:00:00Z')),
    ]);
    expect(ticksBetween(compileSchedule(['0 9 * * *'], 'Europe/Paris'), from, to)[0]?.toISOString()).toBe(
      '2026-11-29T08:00:00.000Z',
    );
    expect(
      ticksBetween(compileSchedule(['CRON_TZ=Asia/Tokyo 0 9 * * *'], 'UTC'), from - 3_600_000, to)[0]?.toISOString(),
    ).toBe('2026-11-29T00:00:00.000Z');
  });

  it('fires a minute named by two expressions once, and drops bad expressions', () => {
    const schedule = compileSchedule(['*/30 * * * *', '0 * * * *', 'not cron'], 'UTC');
    expect(schedule.crons).toHaveLength(2);
    expect(ticksBetween(schedule, at('2026-11-29T09:59:00Z'), at('2026-11-29T10:00:00Z'))).toHaveLength(1);
  });

  it('keeps only the latest `max` ticks of a long window', () => {
    const ticks = ticksBetween(
      compileSchedule(['* * * * *'], 'UTC'),
      at('2026-11-29T10:00:00Z'),
      at('2026-11-29T11:00:00Z'),
      2,
    );
    expect(ticks.map((t) => t.toISOString())).toEqual(['2026-11-29T10:59:00.000Z', '2026-11-29T11:00:00.000Z']);
  });

  it('tells whether a time is still a tick of a schedule', () => {
    expect(isTick(compileSchedule(['0 * * * *'], 'UTC'), new Date('2026-11-29T10:00:00Z'))).toBe(true);
    expect(isTick(compileSchedule(['30 * * * *'], 'UTC'), new Date('2026-11-29T10:00:00Z'))).toBe(false);
  });

  it('gives the next fire time over all expressions, strictly after the instant, or Infinity', () => {
    const schedule = compileSchedule(['30 10 * * *', '0 10 * * *'], 'UTC');
    expect(new Date(nextTickAfter(schedule, at('2026-11-29T09:00:00Z'))).toISOString()).toBe(
      '2026-11-29T10:00:00.000Z',
    );
    expect(new Date(nextTickAfter(schedule, at('2026-11-29T10:00:00Z'))).toISOString()).toBe(
      '2026-11-29T10:30:00.000Z',
    );
    expect(nextTickAfter(compileSchedule(['not cron'], 'UTC'), at('2026-11-29T10:00:00Z'))).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('derives one run id per tick', () => {
    expect(scheduledRunId(new Date('2026-11-29T10:00:00Z'))).toBe('20261129T100000000Z-scheduled');
    expect(splitTimezone('TZ=UTC  5 4 * * *')).toEqual({ pattern: '5 4 * * *', timezone: 'UTC' });
  });
});
