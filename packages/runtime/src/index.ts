export * from './config';
export * from './logger';
export * from './db';
export * from './migrations';
export * from './ops-server';
export * from './shutdown';
export * from './metrics';
export * from './tracing';
