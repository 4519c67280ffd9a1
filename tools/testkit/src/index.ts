export { waitFor } from './wait.js';
export { freePort, isListening } from './ports.js';
export { run, Child, plainEnv, type RunResult } from './process.js';
export { installPacked, installedFiles } from './pack.js';
