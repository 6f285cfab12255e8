import { asRecord, errorMessage } from './action-types';
import { printValue, templateFunc, truthy } from './template-funcs';
import { parseTemplate, type Command, type Node, type Operand, type Pipeline } from './template-parse';

/**
 * Renders a Go `text/template` subset (dagu-actions §1.7) over JSON data with
 * missing keys as errors (`missingkey=error`): `{{ .absent }}` fails with
 * `map has no entry for key "absent"`. Errors read
 * `template: render:<line>: executing "render" at <action>: <detail>`.
 */

/** A render that failed while executing. */
export class TemplateExecError extends Error {}

type Vars = Array<[string, unknown]>;
type BlockNode = Exclude<Node, { kind: 'text' | 'action' }>;

class Renderer {
  private out = '';

  constructor(private readonly root: unknown) {}

  render(nodes: Node[]): string {
    this.walk(nodes, this.root, [['$', this.root]]);
    return this.out;
  }

  private walk(nodes: Node[], dot: unknown, vars: Vars): void {
    const scope: Vars = [...vars];
    for (const node of nodes) {
      if (node.kind === 'text') this.out += node.text;
      else if (node.kind === 'action') {
        const value = this.pipeline(node.pipe, dot, scope);
        if (node.pipe.decl.length === 0) this.out += printValue(value);
      } else if (node.kind === 'range') this.range(node, dot, scope);
      else {
        const inner: Vars = [...scope];
        const value = this.pipeline(node.pipe, dot, inner);
        if (truthy(value)) this.walk(node.body, node.kind === 'with' ? value : dot, inner);
        else this.walk(node.otherwise, dot, scope);
      }
    }
  }

  private range(node: BlockNode, dot: unknown, vars: Vars): void {
    const pipe: Pipeline = { ...node.pipe, decl: [] };
    const value = this.pipeline(pipe, dot, vars);
    const items: Array<[unknown, unknown]> = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : asRecord(value) !== undefined
        ? Object.entries(asRecord(value) ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        : typeof value === 'number'
          ? Array.from({ length: Math.max(0, Math.trunc(value)) }, (_, i) => [i, i])
          : value === null || value === undefined
            ? []
            : this.fail(node.pipe, `range can't iterate over ${printValue(value)}`);
    if (items.length === 0) {
      this.walk(node.otherwise, dot, vars);
      return;
    }
    const [first, second] = node.pipe.decl;
    for (const [key, item] of items) {
      const inner: Vars = [...vars];
      if (second !== undefined && first !== undefined) inner.push([first, key], [second, item]);
      else if (first !== undefined) inner.push([first, item]);
      this.walk(node.body, item, inner);
    }
  }

  private fail(pipe: Pipeline, detail: string): never {
    throw new TemplateExecError(`template: render:${pipe.line}: executing "render" at <${pipe.source}>: ${detail}`);
  }

  private pipeline(pipe: Pipeline, dot: unknown, vars: Vars): unknown {
    let value: unknown;
    pipe.commands.forEach((command, i) => {
      value = this.command(command, dot, vars, pipe, i === 0 ? undefined : { value });
    });
    if (pipe.decl.length > 0) {
      const name = pipe.decl[pipe.decl.length - 1] ?? '$';
      if (pipe.assign) {
        const slot = [...vars].reverse().find(([n]) => n === name);
        if (slot === undefined) this.fail(pipe, `undefined variable: ${name}`);
        slot[1] = value;
      } else vars.push([name, value]);
    }
    return value;
  }

  private command(command: Command, dot: unknown, vars: Vars, pipe: Pipeline, piped?: { value: unknown }): unknown {
    const [head, ...rest] = command.args;
    if (head === undefined) return undefined;
    if (head.kind === 'function') {
      const fn = templateFunc(head.name);
      if (fn === undefined) this.fail(pipe, `function "${head.name}" not defined`);
      const args = rest.map((a) => this.operand(a, dot, vars, pipe));
      if (piped !== undefined) args.push(piped.value);
      try {
        return fn(...args);
      } catch (error) {
        this.fail(pipe, errorMessage(error));
      }
    }
    if (rest.length > 0 || piped !== undefined) this.fail(pipe, `can't give argument to non-function ${pipe.source}`);
    return this.operand(head, dot, vars, pipe);
  }

  private operand(operand: Operand, dot: unknown, vars: Vars, pipe: Pipeline): unknown {
    if (operand.kind === 'literal') return operand.value;
    if (operand.kind === 'function') return this.command({ args: [operand] }, dot, vars, pipe);
    let base: unknown;
    if (operand.base === 'dot') base = dot;
    else if ('variable' in operand.base) {
      const name = operand.base.variable;
      const slot = [...vars].reverse().find(([n]) => n === name);
      if (slot === undefined) this.fail(pipe, `undefined variable "${name}"`);
      base = slot[1];
    } else base = this.pipeline(operand.base.pipe, dot, vars);
    return operand.path.reduce((cur, key) => this.field(cur, key, pipe), base);
  }

  private field(value: unknown, key: string, pipe: Pipeline): unknown {
    if (value === null || value === undefined) this.fail(pipe, `nil pointer evaluating interface {}.${key}`);
    if (typeof value !== 'object' || Array.isArray(value))
      this.fail(pipe, `can't evaluate field ${key} in type ${Array.isArray(value) ? 'slice' : typeof value}`);
    if (!Object.hasOwn(value, key)) this.fail(pipe, `map has no entry for key "${key}"`);
    return asRecord(value)?.[key];
  }
}

/**
 * Parses and renders `template` over `data`.
 *
 * @throws TemplateParseError (`template: parse error`, `function "<name>" not defined`) or
 *   {@link TemplateExecError} (`map has no entry for key`)
 */
export function renderTemplate(template: string, data: unknown): string {
  const nodes = parseTemplate(template, (name) => templateFunc(name) !== undefined);
  return new Renderer(data).render(nodes);
}
