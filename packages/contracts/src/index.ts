export * from './errors';
export * from './principal';
export * from './queues';
export * from './bus';
export * from './ops';
