import { WorkbookSlots } from './workbook-slots';

test('at most `size` holders; a waiter gets the slot given back, in order; one waiting past its deadline gives up', async () => {
  const slots = new WorkbookSlots(1);
  const release = await slots.acquire(Date.now() + 1000);
  const order: string[] = [];
  const second = slots.acquire(Date.now() + 5000).then((r) => {
    order.push('second');
    return r;
  });
  const late = slots.acquire(Date.now() + 20).catch(() => order.push('late gave up'));
  await late;
  release();
  release(); // a second call gives nothing back twice
  const releaseSecond = await second;
  expect(order).toEqual(['late gave up', 'second']);
  const third = await slots.acquire(Date.now() + 10).catch(() => undefined);
  expect(third).toBeUndefined();
  releaseSecond();
  expect(typeof (await slots.acquire(Date.now() + 10))).toBe('function');
});
