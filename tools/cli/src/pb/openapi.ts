import { existsSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMap, isSeq, parseDocument } from 'yaml';

/*
 * The OpenAPI document is made by @svcboot/entry-grpc itself, not by a copy of its generator:
 * the project's grpc entries are booted from its boot.yaml (on port 0, with nothing else of the
 * file), every service of their `protos.files` and `protos.descriptorSets` is added, and the document the entry built at
 * bootstrap is written out. So it is the document `/sw/swagger.json` serves, byte for byte.
 * The packages are resolved from the project, so its installed versions are the ones used.
 */

interface GrpcEntryLike {
  readonly type: string;
  readonly name: string;
  /** `descriptorSets` is absent in entry-grpc versions before it. */
  readonly config: { protos: { files: string[]; includeDirs: string[]; descriptorSets?: string[] } };
  addService(definition: unknown, implementation: Record<string, unknown>): unknown;
  readonly openApiDocument: string;
}

interface AppLike {
  entries(): Array<{ readonly type: string; readonly name: string }>;
  bootstrap(): Promise<void>;
  shutdown(reason?: string): Promise<boolean>;
}

interface CoreModule {
  boot(options: { configFile: string; configText: string; cwd: string; argv: string[]; env: Record<string, string | undefined> }): Promise<AppLike>;
}

interface ProtoLoaderModule {
  loadSync(files: string[], options: { includeDirs: string[]; keepCase: boolean }): Record<string, unknown>;
  loadFileDescriptorSetFromBuffer(set: Buffer, options: { keepCase: boolean }): Record<string, unknown>;
}

const GRPC_ENTRY_TYPE = 'GrpcEntry';

/** Resolves `specifier` as code in `from` would (honouring --conditions) and imports it. */
async function importFrom<T>(specifier: string, from: string): Promise<{ module: T; resolved: string }> {
  const resolved = createRequire(from).resolve(specifier);
  return { module: (await import(pathToFileURL(resolved).href)) as T, resolved };
}

/**
 * boot.yaml reduced to its `app`, `cert` and `grpc` sections, each grpc entry on port 0 and
 * logging to the default loggers, so booting it starts no connector and writes no log file.
 */
export function grpcOnlyConfig(text: string): string {
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) throw new Error('boot.yaml is not a mapping');
  for (const item of [...doc.contents.items]) {
    const key = String((item.key as { value?: unknown } | null)?.value ?? item.key);
    if (!['app', 'cert', 'grpc'].includes(key)) doc.delete(key);
  }
  const grpc = doc.get('grpc');
  if (!isSeq(grpc) || grpc.items.length === 0) return '';
  for (let i = 0; i < grpc.items.length; i++) {
    doc.setIn(['grpc', i, 'port'], 0);
    doc.deleteIn(['grpc', i, 'loggerEntry']);
    doc.deleteIn(['grpc', i, 'eventEntry']);
  }
  return doc.toString();
}

/** `{ entryName: document text }` for every enabled grpc entry of the project's boot.yaml. */
export async function openApiDocuments(cwd: string, bootFile: string): Promise<Map<string, string>> {
  const file = path.resolve(cwd, bootFile);
  if (!existsSync(file)) throw new Error(`${bootFile} not found in ${cwd}: the OpenAPI document comes from its grpc entries (pass --boot, or --no-openapi)`);
  const configText = grpcOnlyConfig(readFileSync(file, 'utf8'));
  const docs = new Map<string, string>();
  if (!configText) return docs;
  const projectRef = path.join(cwd, 'package.json');
  let grpc: { module: unknown; resolved: string };
  try {
    grpc = await importFrom<unknown>('@svcboot/entry-grpc', projectRef);
  } catch (err) {
    throw new Error(`cannot load @svcboot/entry-grpc from ${cwd} (${(err as Error).message.split('\n')[0]}); add it to the project's dependencies and run npm install`, { cause: err });
  }
  // The registry the grpc kind registered in is the entry-core entry-grpc itself imports.
  const core = (await importFrom<CoreModule>('@svcboot/entry-core', grpc.resolved)).module;
  const loader = (await importFrom<ProtoLoaderModule>('@grpc/proto-loader', grpc.resolved)).module;

  const env: Record<string, string | undefined> = { ...process.env };
  delete env['SVC_SET'];
  // entry-grpc reads proto paths relative to the working folder, as the running service does.
  const previous = process.cwd();
  process.chdir(cwd);
  try {
    const app = await core.boot({ configFile: file, configText, cwd, argv: [], env });
    const entries = app.entries().filter((e): e is GrpcEntryLike => e.type === GRPC_ENTRY_TYPE);
    for (const entry of entries) {
      const { files, includeDirs, descriptorSets = [] } = entry.config.protos;
      const loaded: Array<Record<string, unknown>> = [];
      // Absolute names: proto-loader looks relative names up in includeDirs first (and warns).
      if (files.length > 0) loaded.push(loader.loadSync(files.map((f) => path.resolve(cwd, f)), { includeDirs: includeDirs.map((d) => path.resolve(cwd, d)), keepCase: true }));
      // An unreadable set is left to the entry's bootstrap, whose error names the entry and path.
      for (const set of descriptorSets) if (existsSync(path.resolve(cwd, set))) loaded.push(loader.loadFileDescriptorSetFromBuffer(readFileSync(path.resolve(cwd, set)), { keepCase: true }));
      const added = new Set<unknown>();
      for (const definitions of loaded) {
        for (const [name, value] of Object.entries(definitions)) {
          // Message and enum definitions carry `format`; services are maps of method definitions.
          if (value && typeof value === 'object' && !('format' in value) && !added.has(name)) {
            added.add(name);
            entry.addService(value, {});
          }
        }
      }
    }
    try {
      await app.bootstrap();
      for (const entry of entries) docs.set(entry.name, entry.openApiDocument);
    } finally {
      await app.shutdown('svc pb gen');
    }
  } finally {
    process.chdir(previous);
  }
  return docs;
}

/** Writes `<outDir>/<entry>.swagger.json` for each grpc entry, in this process; returns the files. */
export async function writeOpenApiHere(cwd: string, bootFile: string, outDir: string): Promise<string[]> {
  const docs = await openApiDocuments(cwd, bootFile);
  const written: string[] = [];
  if (docs.size === 0) return written;
  const dir = path.resolve(cwd, outDir);
  await mkdir(dir, { recursive: true });
  for (const [name, text] of docs) {
    const f = path.join(dir, `${name}.swagger.json`);
    await writeFile(f, text);
    written.push(f);
  }
  return written;
}

/** The hidden subcommand the worker runs: `svc pb __openapi <cwd> <boot> <outDir> <resultFile>`. */
export const OPENAPI_WORKER = '__openapi';

/**
 * Writes the documents from a child process: booting the entries logs to stdout (as the service
 * would), which is not svc's output, and the child's working folder can be the project's.
 * The child is this same program with the same Node flags (so `--conditions` and loaders hold).
 */
export async function writeOpenApi(cwd: string, bootFile: string, outDir: string): Promise<string[]> {
  const self = fileURLToPath(import.meta.url);
  const bin = path.join(path.dirname(self), '..', `bin${path.extname(self)}`);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-openapi-'));
  const resultFile = path.join(tmp, 'result.json');
  try {
    const stderr = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [...process.execArgv, bin, 'pb', OPENAPI_WORKER, cwd, bootFile, outDir, resultFile], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(err) : reject(new Error(err.trim() || `the OpenAPI worker exited with ${code}`))));
    });
    if (stderr.trim()) process.stderr.write(stderr);
    return JSON.parse(await readFile(resultFile, 'utf8')) as string[];
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
