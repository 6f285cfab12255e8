import { runServiceMain } from '@dagu-mcp/service-kit';
import { loadRunConfig, type RunConfig } from './config/run-config';
import { stepEnvBase } from './core/env-merge';
import { useDagSpecThreads } from './core/dag-spec-threads';
import type { StepLauncher } from './core/step-launch';
import { createStepLauncher, findSetpriv, resolveStepIdentity } from './process/step-launcher';
import { killLeftoverStepGroups, StepGroupRegistry, type LeftoverReport } from './process/step-group-registry';
import { findStepSpawner, ProcessSpawner } from './process/spawner/process-spawner';
import { SpawnerPool } from './process/spawner/spawner-pool';
import { createRunService } from './run-service';

/**
 * run-service process entry point: the shared service config (service-kit)
 * and the engine config (`RUN_*`) from the environment, ops port 8082 by
 * default. Steps get a clean environment (dagu-model §3 layers over
 * `stepEnvBase`: `PATH`, locale, time zone, the step user's `HOME`), never
 * run-service's own variables, and run as `RUN_STEP_USER` through the step
 * launcher (docs/security.md).
 */
const DEFAULTS = { schema: 'run_service', opsPort: 8082 };
let runConfig: RunConfig;
let launcher: StepLauncher;
let leftovers: LeftoverReport;
try {
  runConfig = loadRunConfig();
  useDagSpecThreads(runConfig.specParse);
  const identity = runConfig.stepUser === undefined ? undefined : resolveStepIdentity(runConfig.stepUser);
  // Before anything of the engine runs: steps a killed run-service of this host left behind die first (issue 18 item 6).
  leftovers = killLeftoverStepGroups(runConfig.stateDir);
  const setpriv = findSetpriv(process.env.PATH ?? '');
  const base = createStepLauncher({ identity, setpriv, ownUid: process.getuid?.() ?? -1 });
  const spawnerBinary = runConfig.stepSpawner ? findStepSpawner() : undefined;
  if (runConfig.stepSpawner && spawnerBinary === undefined)
    process.stderr.write('run-service: the native step spawner was not built; steps start from run-service itself\n');
  launcher = {
    ...base,
    groups: new StepGroupRegistry(runConfig.stateDir),
    // createStepLauncher has checked the identity can be switched to (and that setpriv is there for it).
    ...(spawnerBinary !== undefined
      ? {
          spawner: new SpawnerPool(
            Array.from(
              { length: runConfig.stepSpawners },
              () =>
                new ProcessSpawner({
                  binary: spawnerBinary,
                  ...(identity !== undefined ? { identity } : {}),
                  ...(setpriv !== undefined ? { setpriv } : {}),
                }),
            ),
          ),
        }
      : {}),
  };
} catch (error) {
  process.stderr.write(`run-service: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const processEnv = stepEnvBase(process.env, launcher.identity);
runServiceMain('run-service', createRunService({ runConfig, processEnv, launcher, leftovers }), DEFAULTS);
