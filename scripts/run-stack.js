#!/usr/bin/env node
/**
 * Runs the built apps as local processes in the foreground with readable,
 * prefixed logs: human-readable (LOG_PRETTY=true, coloured) when this script's own stdout is a
 * terminal, JSON lines when it is redirected, unless LOG_PRETTY is set. The environment is passed
 * through, so REDIS_URL, DATABASE_URL, PORT, … apply. When one app exits,
 * the others are stopped and the exit code is non-zero; Ctrl-C / SIGTERM stop
 * all of them gracefully.
 *
 * Ports (scripts/stack-ports.js, issue 53 item 2): the gateway on `PORT`; the services' ops ports
 * and the gateway's metrics port on their defaults (8081–8084, 9464), each replaced by a free one
 * when taken, so a second stack (its own `PORT`, `BUS_PREFIX` and database) starts beside a
 * running one; `STACK_PORT_BASE=N` pins them all (N, N+1…N+4, N+5). The ports are printed first.
 */
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { planStackPorts, portEnvOf, describePlan } = require('./stack-ports');

const root = path.join(__dirname, '..');
const apps = ['dag-service', 'run-service', 'wiki-service', 'agent-service', 'mcp-gateway'];
const children = new Map();
let stopping = false;

function startApp(app, plan) {
  const child = spawn(process.execPath, [path.join(root, 'apps', app, 'dist', 'main.js')], {
    env: {
      LOG_PRETTY: process.stdout.isTTY ? 'true' : 'false',
      ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}),
      ...process.env,
      ...portEnvOf(app, plan),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(app, child);
  const label = `[${app}]`.padEnd(15);
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${label} ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    children.delete(app);
    if (!stopping) {
      process.stdout.write(`${label} exited (${signal ?? code}); stopping the stack\n`);
      stop(1);
    } else if (children.size === 0) {
      process.exit(process.exitCode ?? 0);
    }
  });
}

planStackPorts(process.env).then(
  (plan) => {
    process.stdout.write(`${'[stack]'.padEnd(15)} ${describePlan(plan)}\n`);
    if (stopping) return process.exit(process.exitCode ?? 0);
    for (const app of apps) startApp(app, plan);
  },
  (err) => {
    process.stderr.write(`${'[stack]'.padEnd(15)} ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);

function stop(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) process.exit(code);
}

process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
