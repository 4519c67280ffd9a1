/** The exit code with which servers/svcboot.ts says that the booted app has no `app.workers`. */
export const WORKERS_UNSUPPORTED = 3;
