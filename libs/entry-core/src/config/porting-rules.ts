/**
 * The porting rules (config/porting.ts) of entry-core's kinds (`logger`, `event`, `cert`,
 * `config`) and of what every server entry shares (`grpc`, `httpserver`: routes, middleware).
 * docs/porting-from-rk-boot.md lists each with its reason; tools/porting tests that it does.
 */
import { leadingSlash, needsLeadingSlash, type PortingRule } from './porting.js';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** rk-boot drops empty strings from ignore lists and output paths (its `[""]` placeholders). */
const withoutEmpty = (v: unknown): unknown =>
  Array.isArray(v) ? v.filter((s) => !(typeof s === 'string' && s.trim() === '')) : v;
const hasEmpty = (v: unknown): boolean =>
  Array.isArray(v) && v.some((s) => typeof s === 'string' && s.trim() === '');
/** A list that is empty once rk-boot's placeholders are dropped. */
const emptyList = (v: unknown): boolean =>
  Array.isArray(v) && (withoutEmpty(v) as unknown[]).length === 0;

/** A map whose every value is empty (`""`, `[]`, `{}` or absent): rk-boot's template placeholders. */
const allEmpty = (v: unknown): boolean =>
  isMap(v) &&
  Object.values(v).every(
    (x) =>
      x === '' ||
      x === null ||
      x === undefined ||
      (Array.isArray(x) && x.length === 0) ||
      (isMap(x) && Object.keys(x).length === 0),
  );

/** lumberjack's `filename`: rk-logger rotates each file of outputPaths and never reads it. */
const lumberjackFilename: PortingRule[] = [
  {
    path: 'lumberjack',
    action: 'normalise',
    when: (v) => v === null,
    map: () => undefined,
    why: 'an empty lumberjack block is none',
  },
  {
    path: 'lumberjack.filename',
    action: 'normalise',
    when: (v) => v === null || v === '',
    map: () => undefined,
    why: 'an empty filename is no filename',
  },
  {
    path: 'lumberjack.filename',
    action: 'rkIgnored',
    why: "rk-boot rotates each file of outputPaths and never reads lumberjack's filename",
    instead: 'name the file in outputPaths',
  },
];
const loki: PortingRule = {
  path: 'loki',
  action: 'refuse',
  offIsNoop: true,
  why: 'svcboot does not push logs to Loki',
  instead: 'write to stdout (or a file) and ship it with Promtail or Grafana Alloy',
};
const outputPathPlaceholders: PortingRule = {
  path: 'outputPaths',
  action: 'normalise',
  when: hasEmpty,
  map: (v) => (emptyList(v) ? undefined : withoutEmpty(v)),
  why: 'rk-boot drops empty output paths; none left means the default (stdout)',
};

/** `logger:` items: zap's options nested under `zap`, and what has no Node equivalent. */
export const loggerPortingRules: readonly PortingRule[] = [
  { path: 'zap.level', action: 'move', to: 'level', why: 'svcboot has the level on the entry' },
  {
    path: 'zap.encoding',
    action: 'move',
    to: 'encoding',
    why: 'svcboot has the encoding on the entry',
  },
  {
    path: 'zap.outputPaths',
    action: 'move',
    to: 'outputPaths',
    map: (v) => (emptyList(v) ? undefined : withoutEmpty(v)),
    why: 'svcboot has the output paths on the entry',
  },
  {
    path: 'zap.development',
    action: 'ignore',
    why: "zap's development mode has no pino equivalent (the level and encoding decide what is written)",
  },
  {
    path: 'zap.disableCaller',
    action: 'ignore',
    why: 'svcboot never writes the caller (finding it costs a stack trace per line)',
  },
  {
    path: 'zap.disableStacktrace',
    action: 'ignore',
    why: "svcboot writes an error's stack with the error, never a stack for a level",
  },
  {
    path: 'zap.errorOutputPaths',
    action: 'ignore',
    why: "zap's own internal errors; pino reports its own on stderr",
  },
  {
    path: 'zap.encoderConfig',
    action: 'refuse',
    code: 'SVC_PORTING_GO_ONLY',
    why: "zap's encoder config (key names, time and level encoders, separators) is Go-only: svcboot's console and json encodings are fixed",
    instead: 'remove it; use encoding: console or json',
  },
  {
    path: 'zap.sampling',
    action: 'refuse',
    code: 'SVC_PORTING_GO_ONLY',
    why: "zap's log sampling is Go-only",
    instead: 'remove it, or raise the level to write less',
  },
  {
    path: 'zap.initialFields',
    action: 'move',
    to: 'initialFields',
    why: 'svcboot has the fields every line carries on the entry',
  },
  {
    path: 'zap.*',
    action: 'rkIgnored',
    why: "not one of zap's options (level, encoding, outputPaths, initialFields, development, disableCaller, disableStacktrace, errorOutputPaths, encoderConfig, sampling): rk-boot ignores it",
  },
  {
    path: 'zap',
    action: 'normalise',
    when: (v) => isMap(v) && Object.keys(v).length === 0,
    map: () => undefined,
    why: 'nothing is left once its options are moved',
  },
  outputPathPlaceholders,
  ...lumberjackFilename,
  loki,
];

/** `event:` items. */
export const eventPortingRules: readonly PortingRule[] = [
  outputPathPlaceholders,
  ...lumberjackFilename,
  loki,
];

/** Route paths rk-boot writes without the leading `/`, or empty for the default. */
const routePath = (path: string): PortingRule => ({
  path,
  action: 'normalise',
  when: needsLeadingSlash,
  map: leadingSlash,
  why: 'rk-boot adds the leading "/" and reads an empty path as the default',
});

/** rk-gin's gzip levels (Go's compress/flate) as svcboot's compression options. */
const GZIP_LEVELS: Record<string, number | undefined> = {
  bestSpeed: 1,
  bestCompression: 9,
  defaultCompression: 6,
  // Huffman coding only, no string matching: the fastest there is, as level 1 is in zlib's terms.
  huffmanOnly: 1,
};

function gzipToCompression(v: unknown): unknown {
  if (!isMap(v)) return v;
  const { enabled, level, ignore: _ignore, ...rest } = v;
  const out: Record<string, unknown> = { ...rest };
  if (enabled !== undefined) out['enabled'] = level === 'noCompression' ? false : enabled;
  out['encodings'] = ['gzip'];
  if (typeof level === 'string' && level !== 'noCompression') {
    const n = GZIP_LEVELS[level];
    out['gzipLevel'] = n ?? level;
  }
  return out;
}

/**
 * What every server entry (`grpc`, `httpserver`) shares with rk-boot's: the built-in routes'
 * paths and the `middleware` section.
 */
export const serverPortingRules: readonly PortingRule[] = [
  routePath('sw.path'),
  routePath('docs.path'),
  routePath('prom.path'),
  routePath('pprof.path'),
  routePath('static.path'),
  routePath('commonService.pathPrefix'),
  {
    path: 'middleware.errorModel',
    action: 'move',
    to: 'errorModel',
    why: 'svcboot has errorModel on the entry, next to middleware',
  },
  {
    path: 'middleware.ignore',
    action: 'normalise',
    when: hasEmpty,
    map: withoutEmpty,
    why: 'rk-boot drops empty ignore patterns',
  },
  {
    path: 'middleware.*.ignore',
    action: 'normalise',
    when: hasEmpty,
    map: withoutEmpty,
    why: 'rk-boot drops empty ignore patterns',
  },
  {
    path: 'middleware.jwt.symmetric',
    action: 'normalise',
    when: allEmpty,
    map: () => undefined,
    why: "rk-boot's template placeholders (every value empty) mean no key of that kind",
  },
  {
    path: 'middleware.jwt.asymmetric',
    action: 'normalise',
    when: allEmpty,
    map: () => undefined,
    why: "rk-boot's template placeholders (every value empty) mean no key of that kind",
  },
  {
    path: 'middleware.trace.exporter.jaeger',
    action: 'rkIgnored',
    why: 'rk-boot v2 has no Jaeger exporter any more and ignores this key (Jaeger takes OTLP)',
    instead: "use exporter.otlp with the Jaeger collector's OTLP endpoint",
  },
  {
    path: 'middleware.logging.loggerEncoding',
    action: 'ignore',
    why: "svcboot's logging middleware writes one record per call to the event entry, and no per-call log lines, so it has no logger of its own",
    instead: "a handler's log lines go to the entry's loggerEntry",
  },
  {
    path: 'middleware.logging.loggerOutputPaths',
    action: 'ignore',
    why: "svcboot's logging middleware has no logger of its own (see loggerEncoding)",
    instead: "a handler's log lines go to the entry's loggerEntry",
  },
];

/**
 * gin's `middleware.gzip` is httpserver's `compression` (rk-grpc has no gzip middleware); its
 * `level` names become `gzipLevel` numbers.
 */
export const gzipPortingRules: readonly PortingRule[] = [
  {
    path: 'middleware.gzip.ignore',
    action: 'normalise',
    when: emptyList,
    map: () => undefined,
    why: 'an empty ignore list is no list',
  },
  {
    path: 'middleware.gzip.ignore',
    action: 'refuse',
    why: 'compression applies to every response; it has no ignore list (small bodies, under compression.minBytes, go as they are)',
    instead: 'remove the ignore list, or leave compression off',
  },
  {
    path: 'middleware.gzip',
    action: 'move',
    to: 'compression',
    map: gzipToCompression,
    why: 'svcboot compresses responses with compression (gzip and brotli, by Accept-Encoding), not a middleware',
  },
];

/** `app:` — rk-boot's app metadata keys are svcboot's too; nothing to rewrite. */
export const appPortingRules: readonly PortingRule[] = [];
