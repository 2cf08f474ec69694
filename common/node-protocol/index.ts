// The node protocol: every message between a worker daemon and the control plane, declared once.
export * from './placement.js';
export * from './reports.js';
export * from './assignment.js';
export * from './node.js';
export * from './device-time.js';
export * from './version.js';
export * from './report-batch.js';
