export * from './topics';
export * from './schemas';
export * from './decode';
export * from './units';
