/**
 * Host actions in the three authoring forms of dagu-actions §1.1 (action,
 * typed `type:`, legacy `executor:`) and their validation errors (§1.3,
 * §1.6–1.8).
 */
import { parseDagSpec, type NormalizedStep } from './index';

function parse(steps: string): { errors: readonly string[]; steps: NormalizedStep[] } {
  const result = parseDagSpec(`steps:\n${steps}`, { name: 't' });
  return { errors: result.errors, steps: result.dag?.steps ?? [] };
}

describe('the three authoring forms normalise to one action (§1.1)', () => {
  it.each<[string, string, unknown]>([
    [
      'jq action',
      '  - name: a\n    action: jq.filter\n    with: {filter: .x, data: {x: 1}}\n',
      { type: 'jq.filter', with: { filter: '.x', data: { x: 1 } } },
    ],
    [
      'jq typed',
      '  - name: a\n    type: jq\n    command: .x\n    script: \'{"x": 1}\'\n',
      { type: 'jq.filter', with: { filter: '.x', data: '{"x": 1}' } },
    ],
    [
      'jq legacy without a command: the filter is .',
      '  - name: a\n    executor: jq\n    script: "[1]"\n',
      { type: 'jq.filter', with: { filter: '.', data: '[1]' } },
    ],
    [
      'docker legacy config (camelCase, host.binds)',
      '  - name: a\n    executor: {type: docker, config: {image: alpine, autoRemove: true, host: {binds: ["/a:/b"]}}}\n    command: echo hi\n',
      { type: 'docker.run', with: { image: 'alpine', auto_remove: true, volumes: ['/a:/b'], command: 'echo hi' } },
    ],
    [
      'container.run action',
      '  - name: a\n    action: container.run\n    with: {container_name: web, command: [ls, pwd]}\n',
      { type: 'container.run', with: { container_name: 'web', command: ['ls', 'pwd'] } },
    ],
    [
      'template typed with config',
      '  - name: a\n    type: template\n    script: "hi {{ .n }}"\n    config: {data: {n: 1}}\n',
      { type: 'template.render', with: { template: 'hi {{ .n }}', data: { n: 1 } } },
    ],
    [
      'http legacy: method and URL in command, settings in script',
      '  - name: a\n    executor: http\n    command: POST http://h/x\n    script: \'{"headers": {"A": "1"}, "body": "b", "silent": true, "timeout": 5}\'\n',
      {
        type: 'http.request',
        method: 'POST',
        url: 'http://h/x',
        headers: { A: '1' },
        body: 'b',
        silent: true,
        timeoutSec: 5,
      },
    ],
    [
      'http typed with config, query and format json',
      '  - name: a\n    type: http\n    command: GET http://h/\n    config: {query: {q: "1"}, format: json}\n',
      { type: 'http.request', method: 'GET', url: 'http://h/', query: { q: '1' }, json: true },
    ],
    [
      'file legacy: the verb in command',
      '  - name: a\n    executor: file\n    command: read\n    config: {path: x.txt}\n',
      { type: 'file.read', with: { path: 'x.txt' } },
    ],
  ])('%s', (_label, steps, action) => {
    const parsed = parse(steps);
    expect(parsed.errors).toEqual([]);
    const kind = (action as { type: string }).type === 'http.request' ? 'http' : 'host_action';
    expect(parsed.steps[0]).toMatchObject({ kind, action });
  });
});

describe('validation errors (§1.3, §1.6–1.8)', () => {
  it.each<[string, string, string]>([
    ['jq without filter', 'action: jq.filter\n    with: {data: 1}', 'with.filter is required'],
    ['jq empty filter', 'action: jq.filter\n    with: {filter: "", data: 1}', 'with.filter must be a non-empty string'],
    ['jq data and input', 'action: jq.filter\n    with: {filter: ., data: 1, input: a.json}', 'cannot be combined'],
    ['jq neither data nor input', 'action: jq.filter\n    with: {filter: .}', 'exactly one of with.data or with.input'],
    [
      'jq name and $name',
      'action: jq.filter\n    with: {filter: ., data: 1, args: {a: 1, $a: 2}}',
      "both 'a' and '$a'",
    ],
    [
      'template neither',
      'action: template.render\n    with: {data: {a: 1}}',
      'requires exactly one of with.template or with.template_ref',
    ],
    [
      'template both',
      'action: template.render\n    with: {template: x, template_ref: "${env.T}"}',
      'requires exactly one of with.template or with.template_ref',
    ],
    [
      'template_ref not one reference',
      'action: template.render\n    with: {template_ref: "x ${env.T}"}',
      'must be one complete scoped value reference',
    ],
    [
      'docker without image',
      'action: docker.run\n    with: {command: ls}',
      'with.image or with.container_name is required',
    ],
    ['docker bad pull', 'action: docker.run\n    with: {image: a, pull: sometimes}', 'with.pull must be one of'],
    ['file.write without content', 'action: file.write\n    with: {path: a}', 'with.content is required'],
    ['file.read without path', 'action: file.read\n    with: {}', 'with.path is required'],
    ['file.copy same paths', 'action: file.copy\n    with: {source: a, destination: a}', 'must differ'],
    ['file.read unknown key', 'action: file.read\n    with: {path: a, bogus: 1}', "field 'with.bogus': unknown field"],
    ['unknown legacy file verb', 'executor: file\n    command: chmod', 'file executor needs command: one of'],
  ])('%s', (_label, body, needle) => {
    const { errors } = parse(`  - name: a\n    ${body}\n`);
    expect(errors.join('\n')).toContain(needle);
  });
});
