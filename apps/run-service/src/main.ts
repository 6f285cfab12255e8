import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runServiceMain } from '@dagu-mcp/service-kit';
import { loadRunConfig, type RunConfig } from './config/run-config';
import { stepEnvBase } from './core/env-merge';
import { useDagSpecThreads } from './core/dag-spec-threads';
import type { StepLauncher, StepSpawner } from './core/step-launch';
import { useScratchRoot } from './engine/scratch-dirs';
import { preparePrivateDir } from './process/private-dir';
import { createIsolatingLauncher } from './process/run-isolation';
import { createStepLauncher, findOnPath, findSetpriv, resolveStepIdentity } from './process/step-launcher';
import { killLeftoverStepGroups, StepGroupRegistry, type LeftoverReport } from './process/step-group-registry';
import { findStepSpawner, ProcessSpawner } from './process/spawner/process-spawner';
import { SpawnerPool } from './process/spawner/spawner-pool';
import { createRunService } from './run-service';

/**
 * run-service process entry point: the shared service config (service-kit)
 * and the engine config (`RUN_*`) from the environment, ops port 8082 by
 * default. Steps get a clean environment (dagu-model §3 layers over
 * `stepEnvBase`: `PATH`, locale, time zone), never run-service's own
 * variables, and run as a uid of `RUN_STEP_UID_RANGE` of their run's own
 * (or the one `RUN_STEP_USER`) through the step launcher (docs/security.md).
 */
const DEFAULTS = { schema: 'run_service', opsPort: 8082 };
/** Where steps may leave files outside their run directory: cleaned of a run's uid when it ends. */
const SHARED_TMP = ['/tmp', '/var/tmp', '/dev/shm'];
let runConfig: RunConfig;
let launcher: StepLauncher;
let leftovers: LeftoverReport;
try {
  runConfig = loadRunConfig();
  useDagSpecThreads(runConfig.specParse);
  // Every file run-service creates, and every process it starts, is private unless chmod says otherwise.
  process.umask(0o077);
  const identity =
    runConfig.stepUser === undefined || runConfig.stepUidRange !== undefined
      ? undefined
      : resolveStepIdentity(runConfig.stepUser);
  const range =
    runConfig.stepUidRange ?? (identity !== undefined ? { first: identity.uid, last: identity.uid } : undefined);
  // run-service's own files (spill, state, scratch, its TMPDIR) where no step writes.
  preparePrivateDir(runConfig.privateDir, process.getuid?.() ?? -1);
  useScratchRoot(runConfig.privateDir);
  // Before anything of the engine runs: steps a killed run-service of this host left behind die first.
  leftovers = killLeftoverStepGroups(runConfig.stateDir);
  const path = process.env.PATH ?? '';
  const setpriv = findSetpriv(path);
  const spawnerBinary = runConfig.stepSpawner ? findStepSpawner() : undefined;
  if (runConfig.stepSpawner && spawnerBinary === undefined)
    process.stderr.write('run-service: the native step spawner was not built; steps start from run-service itself\n');
  const groups = new StepGroupRegistry(runConfig.stateDir);
  // The spawners run as run-service (root with a uid range) under no-new-privs; each spawn names its run's uid.
  const spawner: StepSpawner | undefined =
    spawnerBinary === undefined
      ? undefined
      : new SpawnerPool(
          Array.from(
            { length: runConfig.stepSpawners },
            () =>
              new ProcessSpawner({
                binary: spawnerBinary,
                ...(setpriv !== undefined ? { setpriv } : {}),
              }),
          ),
        );
  if (range !== undefined) {
    if (setpriv === undefined) throw new Error('util-linux setpriv is not installed; it switches steps to their uid');
    const prlimit = findOnPath(path, 'prlimit');
    launcher = createIsolatingLauncher({
      ...range,
      ...(identity !== undefined ? { gid: identity.gid, userName: identity.name } : {}),
      limits: {
        maxProcesses: runConfig.stepMaxProcesses,
        ...(runConfig.stepMaxAddressBytes !== undefined ? { maxAddressBytes: runConfig.stepMaxAddressBytes } : {}),
        ...(runConfig.stepMaxCpuSeconds !== undefined ? { maxCpuSeconds: runConfig.stepMaxCpuSeconds } : {}),
        ...(runConfig.runDirMaxBytes > 0 ? { maxFileBytes: runConfig.runDirMaxBytes } : {}),
      },
      setpriv,
      ...(prlimit !== undefined ? { prlimit } : {}),
      ownUid: process.getuid?.() ?? -1,
      ownGid: process.getgid?.() ?? -1,
      sharedTmp: SHARED_TMP,
      groups,
      ...(spawner !== undefined ? { spawner } : {}),
    });
  } else {
    const base = createStepLauncher({ identity: undefined, setpriv, ownUid: process.getuid?.() ?? -1 });
    launcher = { ...base, groups, ...(spawner !== undefined ? { spawner } : {}) };
  }
} catch (error) {
  process.stderr.write(`run-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
// HOME, USER and LOGNAME of a run's steps are set per run (process/run-environment.ts).
const processEnv = stepEnvBase(process.env, launcher.identity);
// run-service's own temp files (of Node and its libraries) go to its private directory, not the steps' /tmp.
const ownTmp = join(runConfig.privateDir, 'tmp');
mkdirSync(ownTmp, { recursive: true, mode: 0o700 });
process.env.TMPDIR = ownTmp;
runServiceMain('run-service', createRunService({ runConfig, processEnv, launcher, leftovers }), DEFAULTS);
