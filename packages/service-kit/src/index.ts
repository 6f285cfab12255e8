export * from './service-config';
export * from './service-host';
export * from './service-main';
export * from './ping.handler';
export * from './outbox-drain';
export * from './mutation-records';
export * from './extension-types';
export * from './extension-service';
