// Thread program of budgeted-threads.test.ts: answers each job as its `kind` says.
const { parentPort, threadId } = require('node:worker_threads');

parentPort.on('message', ({ kind }) => {
  if (kind === 'answer') parentPort.postMessage({ threadId });
  else if (kind === 'spin') for (;;);
  else if (kind === 'throw') throw new Error('the job threw');
  else if (kind === 'hoard') {
    const kept = [];
    for (;;) kept.push(new Array(100_000).fill({ kept: kept.length }));
  }
});
