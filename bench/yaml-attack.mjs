/**
 * Benchmark (issue 42 item 2): what authors' YAML costs everyone else. Not a test
 * (CONTRIBUTING "Tests": speed is shown by benchmarks):
 *
 *   bash scripts/build.sh && node bench/yaml-attack.mjs [--seconds 10] [--readers 4]
 *
 * Starts the built stack (bench/lib/stack.mjs), stores one DAG, and runs `readers` MCP SDK
 * clients each reading its spec (`dagu_read dag_spec`) in a loop for `seconds`, three times
 * in the same run:
 *
 * 1. alone;
 * 2. while one more client sends the nesting attack of issue 42 (`dagu_change mode=preview`
 *    of `steps: ` and 200 000, then 500 000 nested brackets) back to back;
 * 3. while that client previews a large valid DAG (300 steps of long commands, about 70 KB, parsed in
 *    dag-service's worker thread) back to back.
 *
 * Then, without readers, previews of valid specs of the attacks' sizes (a long comment):
 * what carrying that many bytes through gateway and bus costs, beside the refusal. And
 * `parseDagSpec` of each attack in this process (the built package): what dag-service
 * itself spends refusing it.
 *
 * The client sending the attacks and large previews runs in a process of its own (this
 * script forked with `--previewer`): an attacker is another client, and building and
 * sending megabyte bodies in the readers' process would delay the readers' own timing.
 *
 * Prints, as JSON, the readers' latency summaries (ms) of each phase, the p99 of phases 2
 * and 3 over phase 1's, and how long each attack, each large preview and each same-size
 * valid preview took to answer.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApiKey, startStack } from './lib/stack.mjs';
import { summarize } from './lib/stats.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const seconds = arg('seconds', 10);
const readers = arg('readers', 4);
const HELLO = 'steps:\n  - name: hello\n    run: echo hello\n';
const attack = (levels) => `steps: ${'['.repeat(levels)}${']'.repeat(levels)}`;
// The same size as an attack, valid: what moving its bytes through the stack costs.
const padded = (chars) => `# ${'x'.repeat(chars)}\n${HELLO}`;
const largeDag = (() => {
  const lines = ['steps:'];
  for (let i = 0; i < 300; i += 1) lines.push(`  - name: s${i}`, `    command: echo "step [${i}] ${'x'.repeat(200)}"`);
  return `${lines.join('\n')}\n`;
})();

/** The spec a preview description names (descriptions cross the process boundary, not megabytes). */
const specOf = ({ kind, size }) => (kind === 'attack' ? attack(size) : kind === 'padded' ? padded(size) : largeDag);

async function connect(mcpUrl, key) {
  const client = new Client({ name: 'bench-yaml-attack', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** Reads the stored spec in a loop on each client until `until`; resolves with the latencies. */
async function readLoop(clients, until) {
  const samples = [];
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < until) {
        const started = performance.now();
        const result = await client.callTool({
          name: 'dagu_read',
          arguments: { target: 'dag_spec', name: 'bench-read' },
        });
        if (result.isError) throw new Error(`read failed: ${JSON.stringify(result.structuredContent)}`);
        samples.push(performance.now() - started);
      }
    }),
  );
  return samples;
}

/**
 * Sends `specs` in turn as previews until `until`; resolves with each answer's time by
 * label, and how many answers were not `valid: expectValid` (with the first such error).
 */
async function previewLoop(client, described, until, expectValid) {
  const specs = described.map(([label, description]) => [label, specOf(description)]);
  const times = Object.fromEntries(specs.map(([label]) => [label, []]));
  const unexpected = [];
  while (Date.now() < until) {
    for (const [label, spec] of specs) {
      const started = performance.now();
      const result = await client.callTool({
        name: 'dagu_change',
        arguments: { name: 'bench-x', spec, mode: 'preview' },
      });
      times[label].push(performance.now() - started);
      if (result.structuredContent?.valid !== expectValid)
        unexpected.push(`${label}: ${JSON.stringify(result.structuredContent ?? result.content)}`.slice(0, 400));
    }
  }
  return {
    ...Object.fromEntries(Object.entries(times).map(([label, samples]) => [label, summarize(samples)])),
    unexpectedAnswers: unexpected.length,
    ...(unexpected.length > 0 ? { firstUnexpected: unexpected[0] } : {}),
  };
}

/**
 * Runs {@link previewLoop} in the forked previewer process (one MCP client of its own)
 * and resolves with its summary.
 */
function previewElsewhere(previewer, described, until, expectValid) {
  return new Promise((resolve, reject) => {
    const onMessage = (message) => {
      previewer.off('exit', onExit);
      if (message.error !== undefined) reject(new Error(`previewer: ${message.error}`));
      else resolve(message.result);
    };
    const onExit = (code) => reject(new Error(`previewer exited ${code}`));
    previewer.once('message', onMessage);
    previewer.once('exit', onExit);
    previewer.send({ described, until, expectValid });
  });
}

/** The previewer process: connects, then answers each `{described, until, expectValid}`. */
async function runPreviewer() {
  const [mcpUrl, key] = process.argv.slice(process.argv.indexOf('--previewer') + 1);
  const client = await connect(mcpUrl, key);
  process.on('message', ({ described, until, expectValid }) => {
    previewLoop(client, described, until, expectValid).then(
      (result) => process.send({ result }),
      (err) => process.send({ error: String(err) }),
    );
  });
  process.on('disconnect', () => void client.close().finally(() => process.exit(0)));
  process.send({ ready: true });
}

if (process.argv.includes('--previewer')) {
  await runPreviewer();
} else {
  await main();
}

async function main() {
  const stack = await startStack({
    databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    // BODY_PARSE_THREAD_MIN_BYTES=1000000000 parses every body on the gateway's event loop (before/after).
    extraEnv:
      process.env.BODY_PARSE_THREAD_MIN_BYTES === undefined
        ? {}
        : { BODY_PARSE_THREAD_MIN_BYTES: process.env.BODY_PARSE_THREAD_MIN_BYTES },
  });
  const clients = [];
  let previewer;
  try {
    const key = await createApiKey(stack);
    const mcpUrl = stack.mcpUrl ?? `${stack.baseUrl}/mcp`;
    for (let i = 0; i < readers; i += 1) clients.push(await connect(mcpUrl, key));
    const readerClients = clients;
    const author = await connect(mcpUrl, key);
    clients.push(author);
    const stored = await author.callTool({
      name: 'dagu_change',
      arguments: { name: 'bench-read', spec: HELLO, mode: 'apply' },
    });
    if (stored.structuredContent?.applied !== true) throw new Error('could not store the read DAG');
    previewer = fork(fileURLToPath(import.meta.url), ['--previewer', mcpUrl, key], { stdio: 'inherit' });
    await new Promise((resolve, reject) => {
      previewer.once('message', resolve);
      previewer.once('exit', (code) => reject(new Error(`previewer exited ${code}`)));
    });
    const ATTACK_200K = ['attack 200000', { kind: 'attack', size: 200_000 }];
    const ATTACK_500K = ['attack 500000', { kind: 'attack', size: 500_000 }];
    const LARGE = ['large valid DAG', { kind: 'large' }];
    // Warm-up: the read path, the attack's refusal and the worker thread.
    await readLoop(readerClients, Date.now() + 2000);
    await previewElsewhere(previewer, [ATTACK_200K], Date.now() + 500, false);
    await previewElsewhere(previewer, [LARGE], Date.now() + 500, true);

    const alone = summarize(await readLoop(readerClients, Date.now() + seconds * 1000));
    let until = Date.now() + seconds * 1000;
    const [underAttack, attacks] = await Promise.all([
      readLoop(readerClients, until),
      previewElsewhere(previewer, [ATTACK_200K, ATTACK_500K], until, false),
    ]);
    until = Date.now() + seconds * 1000;
    const [underLarge, large] = await Promise.all([
      readLoop(readerClients, until),
      previewElsewhere(previewer, [LARGE], until, true),
    ]);
    // Same-size valid previews, one after another (no readers): the transport's share of an answer.
    const sameSize = await previewElsewhere(
      previewer,
      [
        ['valid, 400 KB comment', { kind: 'padded', size: 400_000 }],
        ['valid, 1 MB comment', { kind: 'padded', size: 1_000_000 }],
      ],
      Date.now() + 3000,
      true,
    );
    // The refusal itself, in this process with the built package (what dag-service spends on it).
    const { parseDagSpec } = await import('../packages/dag-spec/dist/index.js');
    const inProcess = {};
    for (const levels of [200_000, 500_000]) {
      const text = attack(levels);
      const samples = [];
      for (let i = 0; i < 50; i += 1) {
        const started = performance.now();
        parseDagSpec(text, { name: 'x' });
        samples.push(performance.now() - started);
      }
      inProcess[`attack ${levels}`] = summarize(samples);
    }
    const attackReads = summarize(underAttack);
    const largeReads = summarize(underLarge);
    console.log(
      JSON.stringify(
        {
          seconds,
          readers,
          largeDagBytes: Buffer.byteLength(largeDag),
          readsAloneMs: alone,
          readsDuringAttackMs: attackReads,
          readsDuringLargePreviewsMs: largeReads,
          p99DuringAttackOverAlone: attackReads.p99 / alone.p99,
          p99DuringLargePreviewsOverAlone: largeReads.p99 / alone.p99,
          attackAnswerMs: attacks,
          sameSizeValidPreviewAnswerMs: sameSize,
          attackRefusalInParseDagSpecMs: inProcess,
          largePreviewAnswerMs: large,
        },
        null,
        2,
      ),
    );
  } finally {
    previewer?.disconnect();
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await stack.stop();
  }
}
