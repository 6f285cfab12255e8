import { createLogger } from '@dagu-mcp/runtime';
import { RunScheduler, type ScheduleEntry } from './run-scheduler';

const logger = createLogger({ name: 'test', level: 'silent' });
const T0 = Date.parse('2026-11-29T10:00:30Z');

/** Schedulers on a shared fake clock and DAG list; `fire` records (dag, tick). */
function setup(replicas = 1) {
  let now = T0;
  let entries: ScheduleEntry[] = [{ name: 'every', schedule: ['* * * * *'], suspended: false, version: 1 }];
  const fired: string[] = [];
  const schedulers = Array.from(
    { length: replicas },
    () =>
      new RunScheduler({
        list: async () => entries,
        fire: async (name, tick) => void fired.push(`${name}@${tick.toISOString().slice(11, 16)}`),
        timezone: 'UTC',
        checkMs: 60_000,
        refreshMs: 1,
        logger,
        now: () => now,
      }),
  );
  for (const s of schedulers) s.start();
  return {
    fired,
    advance: async (ms: number) => {
      now += ms;
      for (const s of schedulers) await s.check();
    },
    setEntries: (next: ScheduleEntry[]) => {
      entries = next;
    },
    stop: () => Promise.all(schedulers.map((s) => s.stop())),
  };
}

describe('RunScheduler', () => {
  it('fires each tick once per replica, the first tick after start only (missed ticks are skipped)', async () => {
    const { fired, advance, stop } = setup();
    await advance(10_000);
    expect(fired).toEqual([]);
    await advance(20_000); // 10:01:00
    await advance(30_000);
    await advance(30_000); // 10:02:00
    expect(fired).toEqual(['every@10:01', 'every@10:02']);
    await stop();
  });

  it('follows suspension, schedule changes and deletion at the next refresh', async () => {
    const { fired, advance, setEntries, stop } = setup();
    setEntries([{ name: 'every', schedule: ['* * * * *'], suspended: true, version: 1 }]);
    await advance(30_000);
    setEntries([{ name: 'every', schedule: ['*/5 * * * *'], suspended: false, version: 2 }]);
    await advance(60_000); // 10:02
    await advance(180_000); // 10:05
    setEntries([]);
    await advance(300_000); // 10:10
    expect(fired).toEqual(['every@10:05']);
    await stop();
  });

  it('fires every due DAG among many, each at its own minute, after a schedule change too', async () => {
    const { fired, advance, setEntries, stop } = setup();
    const many = Array.from({ length: 300 }, (_, i) => ({
      name: `d${i}`,
      schedule: [`${i % 3} 10 * * *`],
      suspended: false,
      version: 1,
    }));
    setEntries(many);
    await advance(60_000); // 10:01:30: the window started at 10:00:30, so only the `1 10` DAGs (d1, d4, …)
    expect(fired.filter((f) => f.endsWith('@10:01'))).toHaveLength(100);
    setEntries(many.map((e) => (e.name === 'd1' ? { ...e, schedule: ['5 10 * * *'], version: 2 } : e)));
    await advance(60_000); // 10:02:30: d2, d5, …
    expect(fired.filter((f) => f.endsWith('@10:02'))).toHaveLength(100);
    await advance(180_000); // 10:05:30
    expect(fired.filter((f) => f.endsWith('@10:05'))).toEqual(['d1@10:05']);
    expect(fired).toHaveLength(201);
    await stop();
  });

  it('two replicas each fire the tick (the fire function makes it one run)', async () => {
    const { fired, advance, stop } = setup(2);
    await advance(30_000);
    expect(fired).toEqual(['every@10:01', 'every@10:01']);
    await stop();
  });
});
