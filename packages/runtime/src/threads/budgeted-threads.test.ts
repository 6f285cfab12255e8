import { join } from 'node:path';
import { BudgetedThreads } from './budgeted-threads';

/** Real worker threads running a small program (test-fixtures/budgeted-thread-program.js). */
const PROGRAM = join(__dirname, '..', '..', 'test-fixtures', 'budgeted-thread-program.js');
jest.setTimeout(60_000);

let threads: BudgetedThreads | undefined;
afterEach(async () => {
  await threads?.close();
  threads = undefined;
});

describe('BudgetedThreads', () => {
  it('answers jobs and keeps a thread warm for the next one', async () => {
    threads = new BudgetedThreads(PROGRAM, { budgetMs: 30_000, memoryMb: 64, threads: 1 });
    const first = await threads.run({ kind: 'answer' });
    const second = await threads.run({ kind: 'answer' });
    expect(first).toEqual({ answer: { threadId: expect.any(Number) as number } });
    expect(second).toEqual(first);
  });

  it('ends a job past its time budget, and the next job gets a new thread', async () => {
    threads = new BudgetedThreads(PROGRAM, { budgetMs: 300, memoryMb: 64, threads: 1 });
    const warm = await threads.run({ kind: 'answer' });
    expect(await threads.run({ kind: 'spin' })).toEqual({ fault: 'time', message: 'over 300 ms' });
    const next = await threads.run({ kind: 'answer' });
    expect(next).not.toEqual(warm);
  });

  it('ends a job past its heap cap as a memory fault', async () => {
    threads = new BudgetedThreads(PROGRAM, { budgetMs: 30_000, memoryMb: 16, threads: 1 });
    expect(await threads.run({ kind: 'hoard' })).toMatchObject({ fault: 'memory' });
    expect(await threads.run({ kind: 'answer' })).toHaveProperty('answer');
  });

  it('answers a job whose thread threw as failed', async () => {
    threads = new BudgetedThreads(PROGRAM, { budgetMs: 30_000, memoryMb: 64, threads: 1 });
    expect(await threads.run({ kind: 'throw' })).toEqual({ fault: 'failed', message: 'the job threw' });
  });

  it('runs at most `threads` jobs at once; later ones wait for a thread', async () => {
    threads = new BudgetedThreads(PROGRAM, { budgetMs: 500, memoryMb: 64, threads: 1 });
    // The spinning job holds the only thread until its budget ends it; the answer waits, then gets a new thread.
    const [spun, answered] = await Promise.all([threads.run({ kind: 'spin' }), threads.run({ kind: 'answer' })]);
    expect(spun).toMatchObject({ fault: 'time' });
    expect(answered).toHaveProperty('answer');
  });
});
