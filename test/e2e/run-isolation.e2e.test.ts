/**
 * Runs isolated from each other (issue 43; docs/security.md "A uid per run"):
 * with `RUN_STEP_UID_RANGE` each run's processes run as a uid of their own,
 * `umask 077`, the run directory as `HOME`, working directory and `TMPDIR`.
 * A step of one run can neither read nor write another run's directory, its
 * `TMPDIR` or the files it left in `/tmp`; when a run ends its `/tmp` files
 * are gone and its directory is closed; a fork storm stops at
 * `RUN_STEP_MAX_PROCESSES` while another run goes on.
 *
 * Runs as root (as here and in CI): switching uids needs it; it fails, never
 * skips, otherwise.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, startStack, type Stack } from './stack';

const FIRST_UID = 200000;
const LAST_UID = 200999;
const MAX_PROCESSES = 40;

interface Run {
  dagRunId: string;
  status: number;
  steps: Array<{ name: string; status: number; outputs?: Record<string, string>; error?: string }>;
}

let stack: Stack;
let client: Client;
let workDir: string;
let privateDir: string;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('this test switches uids: run it as root');
  workDir = mkdtempSync(join(tmpdir(), 'e2e-run-isolation-'));
  privateDir = mkdtempSync(join(tmpdir(), 'e2e-run-private-'));
  stack = await startStack({
    RUN_STEP_UID_RANGE: `${FIRST_UID}-${LAST_UID}`,
    RUN_STEP_MAX_PROCESSES: String(MAX_PROCESSES),
    RUN_WORK_DIR: workDir,
    RUN_PRIVATE_DIR: privateDir,
  });
  client = await connectClient(stack.mcpUrl);
}, 60_000);

afterAll(async () => {
  await client.close();
  await stack.stop();
  rmSync(workDir, { recursive: true, force: true });
  rmSync(privateDir, { recursive: true, force: true });
});

async function apply(name: string, spec: string): Promise<void> {
  const applied = await client.callTool({ name: 'dagu_change', arguments: { name, spec, mode: 'apply' } });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
}

/** Starts DAG `name`; with `wait`, returns the finished run, else the run id alone. */
async function start(name: string, wait: boolean): Promise<Run> {
  const started = await client.callTool(
    { name: 'dagu_execute', arguments: { action: 'start', name, ...(wait ? { wait, waitTimeoutSeconds: 60 } : {}) } },
    undefined,
    { timeout: 70_000 },
  );
  const sc = started.structuredContent as { run?: Run; dagRunId: string };
  return sc.run ?? { dagRunId: sc.dagRunId, status: 1, steps: [] };
}

async function readRun(name: string, dagRunId: string): Promise<Run> {
  const read = await client.callTool({ name: 'dagu_read', arguments: { target: 'run', name, dagRunId } });
  return (read.structuredContent as { data: Run }).data;
}

/** Reads run `dagRunId` until it is no longer queued or running (status 1 or 5). */
async function untilEnded(name: string, dagRunId: string): Promise<Run> {
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const run = await readRun(name, dagRunId);
    if (run.status !== 1 && run.status !== 5) return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${dagRunId} did not end`);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Processes of `uid` that are not zombies (`/proc/<pid>/status`). */
function liveProcessesOf(uid: number): number {
  let count = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status) && !/^State:\s+Z/m.test(status)) count++;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

const outputsOf = (run: Run): Record<string, Record<string, string> | undefined> =>
  Object.fromEntries(run.steps.map((s) => [s.name, s.outputs]));

test("a step of one run cannot read or write another run's directory, TMPDIR or /tmp files", async () => {
  const tag = randomBytes(4).toString('hex');
  const tmpFile = `/tmp/iso-a-${tag}.txt`;
  await apply(
    'iso-a',
    `steps:
  - name: plant
    run: |
      echo A-SECRET > secret.txt
      echo A-SECRET > "$TMPDIR/tmp-secret.txt"
      echo A-SECRET > ${tmpFile}
      echo "UID=$(id -u)" >> "$DAGU_OUTPUT_FILE"
      echo "UMASK=$(umask)" >> "$DAGU_OUTPUT_FILE"
      echo "PRIVATE=$([ "$HOME" = "$PWD" ] && [ "$TMPDIR" = "$PWD" ] && [ "$PWD" = "$DAG_RUN_WORK_DIR" ] && echo yes)" >> "$DAGU_OUTPUT_FILE"
      echo "MODE=$(stat -c %a .)" >> "$DAGU_OUTPUT_FILE"
      touch planted-done
      sleep 4
    outputs: [UID, UMASK, PRIVATE, MODE]
`,
  );
  const a = await start('iso-a', false);
  const aDir = join(workDir, 'iso-a', a.dagRunId);
  await until(() => existsSync(join(aDir, 'planted-done')), "run A's files");

  const check = (label: string, test: string): string =>
    `      if ${test} 2>/dev/null; then r=yes; else r=no; fi; echo "${label}=$r" >> "$DAGU_OUTPUT_FILE"\n`;
  await apply(
    'iso-b',
    `steps:
  - name: probe
    run: |
      echo "UID=$(id -u)" >> "$DAGU_OUTPUT_FILE"
${check('READ_DIR', `cat ${aDir}/secret.txt`)}${check('READ_TMPDIR', `cat ${aDir}/tmp-secret.txt`)}${check('READ_TMP', `cat ${tmpFile}`)}${check('WRITE_DIR', `touch ${aDir}/planted-by-b`)}${check('WRITE_TMP', `sh -c 'echo B >> ${tmpFile}'`)}${check('LIST_DIR', `ls ${aDir}`)}${check('LIST_DAGS', `ls ${workDir}/iso-a`)}
    outputs: [UID, READ_DIR, READ_TMPDIR, READ_TMP, WRITE_DIR, WRITE_TMP, LIST_DIR, LIST_DAGS]
`,
  );
  const b = await start('iso-b', true);
  expect(b.status).toBe(4);
  const probe = outputsOf(b).probe;
  expect(probe).toEqual({
    UID: expect.any(String) as string,
    READ_DIR: 'no',
    READ_TMPDIR: 'no',
    READ_TMP: 'no',
    WRITE_DIR: 'no',
    WRITE_TMP: 'no',
    LIST_DIR: 'no',
    LIST_DAGS: 'no',
  });

  const aEnded = await untilEnded('iso-a', a.dagRunId);
  expect(aEnded.status).toBe(4);
  const plant = outputsOf(aEnded).plant;
  expect(plant).toMatchObject({ UMASK: '0077', PRIVATE: 'yes', MODE: '700' });
  const uidA = Number(plant?.UID);
  const uidB = Number(probe?.UID);
  for (const uid of [uidA, uidB]) expect(uid >= FIRST_UID && uid <= LAST_UID).toBe(true);
  expect(uidA).not.toBe(uidB);
  // Ended: its /tmp file is gone, its directory is run-service's again and closed.
  expect(existsSync(tmpFile)).toBe(false);
  const sealed = statSync(aDir);
  expect({ uid: sealed.uid, mode: sealed.mode & 0o777 }).toEqual({ uid: 0, mode: 0o700 });
}, 90_000);

test('a fork storm stops at RUN_STEP_MAX_PROCESSES while another run goes on', async () => {
  // Counting uses shell built-ins only: past the limit, nothing of the storm's uid can fork. The storm's
  // processes are never killed by the step (a `kill -1` would reach every process of the machine if the
  // step ran as root, as on a build without uids per run): their output goes to /dev/null, so the step
  // ends while they sleep, and the run's end kills them by uid.
  await apply(
    'iso-storm',
    `steps:
  - name: storm
    run: |
      me=$(id -u)
      (i=0; while [ $i -lt 300 ]; do sleep 30 > /dev/null 2>&1 < /dev/null & i=$((i+1)); done) > /dev/null 2>&1
      n=0
      for f in /proc/[0-9]*/status; do
        while read -r k v rest; do
          if [ "$k" = "Uid:" ]; then if [ "$v" = "$me" ]; then n=$((n+1)); fi; break; fi
        done < "$f"
      done 2>/dev/null
      echo "PROCS=$n" >> "$DAGU_OUTPUT_FILE"
      echo "UID=$me" >> "$DAGU_OUTPUT_FILE"
      : > storm-full
      # Held (built-ins only) until the other run has run, so both overlap.
      t=0; while [ ! -e release ] && [ $t -lt 5000000 ]; do t=$((t+1)); done
    outputs: [PROCS, UID]
`,
  );
  await apply(
    'iso-calm',
    `steps:
  - name: calm
    run: |
      for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0 & done; wait
      echo "OK=yes" >> "$DAGU_OUTPUT_FILE"
    outputs: [OK]
`,
  );
  const storm = await start('iso-storm', false);
  const stormDir = join(workDir, 'iso-storm', storm.dagRunId);
  await until(() => existsSync(join(stormDir, 'storm-full')), 'the storm to fill its limit');
  const calm = await start('iso-calm', true);
  expect({ status: calm.status, outputs: outputsOf(calm) }).toEqual({ status: 4, outputs: { calm: { OK: 'yes' } } });
  expect(existsSync(join(stormDir, 'storm-full'))).toBe(true);
  writeFileSync(join(stormDir, 'release'), '');
  const ended = await untilEnded('iso-storm', storm.dagRunId);
  const procs = Number(outputsOf(ended).storm?.PROCS);
  expect(procs).toBeLessThanOrEqual(MAX_PROCESSES);
  expect(procs).toBeGreaterThan(MAX_PROCESSES / 2);
  // The run's end killed what its storm left sleeping.
  const uid = Number(outputsOf(ended).storm?.UID);
  expect(uid >= FIRST_UID && uid <= LAST_UID).toBe(true);
  await until(() => liveProcessesOf(uid) === 0, "the storm's processes to end with its run");
}, 90_000);

test("run-service's own files (spill, state, scratch, its TMPDIR) are out of every step's reach", async () => {
  const check = (label: string, test: string): string =>
    `      if ${test} 2>/dev/null; then r=yes; else r=no; fi; echo "${label}=$r" >> "$DAGU_OUTPUT_FILE"\n`;
  await apply(
    'iso-private',
    `steps:
  - name: probe
    run: |
      echo "SCRATCH_PRIVATE=$(case "$DAGU_OUTPUT_FILE" in ${privateDir}/*) echo yes;; *) echo no;; esac)" >> "$DAGU_OUTPUT_FILE"
${check('LIST_PRIVATE', `ls ${privateDir}`)}${check('WRITE_PRIVATE', `touch ${privateDir}/planted`)}${check('WRITE_STATE', `touch ${privateDir}/replica-state/planted`)}${check('WRITE_SPILL', `mkdir -p ${privateDir}/outage-spill/planted`)}${check('WRITE_OWN_TMP', `touch ${privateDir}/tmp/planted`)}${check('LIST_SCRATCH', 'ls "$(dirname "$(dirname "$DAGU_OUTPUT_FILE")")"')}${check('WRITE_SCRATCH', 'touch "$(dirname "$DAGU_OUTPUT_FILE")/planted"')}${check('WRITE_WORK_DIR', `touch ${workDir}/planted`)}
    outputs: [SCRATCH_PRIVATE, LIST_PRIVATE, WRITE_PRIVATE, WRITE_STATE, WRITE_SPILL, WRITE_OWN_TMP, LIST_SCRATCH, WRITE_SCRATCH, WRITE_WORK_DIR]
`,
  );
  const run = await start('iso-private', true);
  expect({ status: run.status, probe: outputsOf(run).probe }).toEqual({
    status: 4,
    probe: {
      SCRATCH_PRIVATE: 'yes',
      LIST_PRIVATE: 'no',
      WRITE_PRIVATE: 'no',
      WRITE_STATE: 'no',
      WRITE_SPILL: 'no',
      WRITE_OWN_TMP: 'no',
      LIST_SCRATCH: 'no',
      WRITE_SCRATCH: 'no',
      WRITE_WORK_DIR: 'no',
    },
  });
  expect(statSync(privateDir).mode & 0o777).toBe(0o711);
}, 60_000);
