// Preloaded (`--import`) by untyped-start-app.ts: records every module the process resolves
// (ES imports, through a resolve hook) and every `require` request (CommonJS, and the
// synchronous `require` of an ES file that protobuf-es.ts uses), so that the app can tell which
// packages were loaded. globalThis.__recordedModules() answers the list so far.
import { Module, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => seen.add(url));
port1.unref();
register('./record-modules-hooks.mjs', import.meta.url, {
  data: { port: port2 },
  transferList: [port2],
});

const load = Module._load;
Module._load = function (request, parent, isMain) {
  seen.add(String(request));
  return load.call(this, request, parent, isMain);
};

globalThis.__recordedModules = () => [...seen];
