export * from './config/index.ts';
export * from './duration/index.ts';
export * from './errors.ts';
export * from './expression/index.ts';
export * from './logging.ts';
