/**
 * Every real Dagu file in test-fixtures/dagu-examples (copies of Dagu's own
 * example DAGs, kept in this repository) with the outcome this project gives it
 * (dagu-model.md §3–4): valid, or the exact list of errors.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseDagSpec } from './index';

const DIR = path.join(__dirname, '..', 'test-fixtures', 'dagu-examples');
const VALID: string[] = [];
const idPattern = 'step id must match ^[A-Za-z][A-Za-z0-9_]*$ and be at most 40 characters';
const chainDepends = "field 'depends': depends is not allowed in a chain DAG";

const EXPECTED: Record<string, string[]> = {
  'agent-valid.yaml': [
    "field 'llm': LLM agents are not supported here",
    "field 'tasks': LLM agent tasks are not supported here",
    "field 'type': DAG type 'agent' (LLM agent) is not supported here",
  ],
  'cli-docker-container.yaml': ["field 'container': containers are not supported here"],
  'cli-http-requests.yaml': VALID,
  'cli-lifecycle-hooks.yaml': VALID,
  'conf-duplicate-id.yaml': ["step 'Build image again': field 'id': duplicate step id (value: build)"],
  'conf-duplicate-name.yaml': ["step 'Duplicate': field 'name': duplicate step name (value: Duplicate)"],
  'conf-entrypoint-name.yaml': VALID,
  'conf-invalid-cycle.yaml': ['dependency cycle detected: first -> second -> first'],
  'conf-invalid-yaml.yaml': [
    'invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 5, column 1',
  ],
  'conf-later-doc-no-name.yaml': ["document 2: field 'name': a sub-DAG document must have a name"],
  'conf-non-string-depends.yaml': VALID,
  'conf-reserved-id.yaml': ["step 'Reserved id': field 'id': step id 'ENV' is reserved (value: ENV)"],
  'conf-steps-mapping.yaml': VALID,
  'conf-unknown-dependency.yaml': ['step deploy depends on non-existent step build'],
  'conf-unknown-root-field.yaml': ["field 'unknown': unknown field"],
  'conf-valid-string-output.yaml': VALID,
  'embedded-custom-executor.yaml': [
    "step 'call-go-code': field 'action': action 'embedded_echo' is not supported here",
  ],
  'embedded-distributed.yaml': VALID,
  'ex01-basic-sequential.yaml': VALID,
  'ex02-parallel-execution.yaml': VALID,
  'ex03-scheduling.yaml': VALID,
  'ex04-nested-workflows.yaml': VALID,
  'ex05-template-and-file.yaml': VALID,
  'ht-acknowledgement-shape.yaml': VALID,
  'ht-form-shape.yaml': VALID,
  'ht-invalid-foreach-human-task.yaml': [
    "step 'loop': step 'review': field 'action': human.task is not allowed inside foreach (value: human.task)",
  ],
  'ht-invalid-missing-id.yaml': ["step 'review': field 'id': human.task steps need an explicit id"],
  'ht-parent-dag-run.yaml': VALID,
  'intg-approval-blocks-dependents.yaml': VALID,
  'intg-approval-input-required.yaml': VALID,
  'intg-dag-precondition-false.yaml': VALID,
  'intg-init-handler-fails.yaml': VALID,
  'intg-mark-success.yaml': VALID,
  'intg-partial-success.yaml': VALID,
  'intg-single-step-continue-on.yaml': VALID,
  'intg-subdag-child-partial.yaml': VALID,
  'intg-subdag-missing-child.yaml': VALID,
  'intg-wait-handler.yaml': VALID,
  'k8s-example-dag.yaml': [
    "field 'queue': queue must be a queue name; worker queues and labels are not supported here " +
      '(value: {"enabled":true,"labels":["environment=dev","cluster=k8s"]})',
  ],
  'schema-foreach-collect.yaml': VALID,
  'schema-foreach-no-steps.yaml': ["step 'summarize': field 'foreach.steps': foreach requires at least one step"],
  'skill-human-input.yaml': VALID,
  'v1-chain-with-override.yaml': [
    `step 'build-docs': ${chainDepends} (value: ["install-deps"])`,
    `step 'deploy': ${chainDepends} (value: ["run-tests","build-docs"])`,
  ],
  'v1-chain-workflow.yaml': VALID,
  'v1-command-array.yaml': VALID,
  'v1-define-condition.yaml': VALID,
  'v1-example-workflow.yaml': VALID,
  'v1-execute-jq-command.yaml': VALID,
  'v1-execute-ssh-command.yaml': [
    "step 'print ec2 instance id': field 'executor': executor type 'ssh' is not supported here",
  ],
  'v1-hello-world.yaml': VALID,
  'v1-int-call-sub.yaml': VALID,
  'v1-int-chain.yaml': VALID,
  'v1-int-repeat-with-limit.yaml': VALID,
  'v1-int-retry-with-backoff.yaml': VALID,
  'v1-invalid-no-command.yaml': ["step 'step1': field 'command': step command is required"],
  'v1-invalid-schedule.yaml': ["field 'schedule': cron expression must have exactly 5 fields (value: 1)"],
  'v1-pass-parameters.yaml': VALID,
  'v1-send-mail.yaml': ["step 'step1': field 'executor': executor type 'mail' is not supported here"],
  'v1-step-preconditions.yaml': VALID,
  'v1-step-with-id.yaml': [
    `step 'fetch-data': field 'id': ${idPattern} (value: data-fetcher-v1)`,
    `step 'process-data': field 'id': ${idPattern} (value: processor-v2)`,
  ],
};

function load(file: string): string {
  return fs.readFileSync(path.join(DIR, file), 'utf8');
}

describe('dagu-examples', () => {
  it('has an expectation for every example file', () => {
    const files = fs
      .readdirSync(DIR)
      .filter((file) => file.endsWith('.yaml'))
      .sort();
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', (file, expected) => {
    const result = parseDagSpec(load(file), { name: file.replace(/\.yaml$/, '') });
    expect(result.errors).toEqual(expected);
    // Real Dagu files are the measure (dagu-model §3): none gains a warning at preview.
    expect(result.warnings).toEqual([]);
    expect(result.valid).toBe(expected.length === 0);
    expect(result.dag !== undefined).toBe(result.valid);
    if (result.dag) expect(JSON.parse(JSON.stringify(result.dag))).toEqual(result.dag);
  });
});
