export * from './topics';
export * from './schemas';
export * from './decode';
export * from './bounds';
export * from './units';
