/**
 * Every svcboot package in one import: each entry kind and middleware registers itself when its
 * package is imported, so after `import '@svcboot/all'` every boot.yaml key and every
 * `middleware.<key>` svcboot ships is known to `boot()`. For an app that pays only for what its
 * boot.yaml turns on, depend on the packages themselves instead (README, "Install sizes").
 */
import { cachePlugin } from '@svcboot/entry-cache';
import { columnarPlugin } from '@svcboot/entry-columnar';
import type { AnyEntryPlugin, AnyMiddlewareDefinition } from '@svcboot/entry-core';
import { grpcPlugin } from '@svcboot/entry-grpc';
import { grpcClientPlugin } from '@svcboot/entry-grpcclient';
import { httpPlugin } from '@svcboot/entry-http';
import { httpClientPlugin } from '@svcboot/entry-httpclient';
import { kvPlugin } from '@svcboot/entry-kv';
import { relationalDbPlugin } from '@svcboot/entry-sql';
import { jwtDefinition } from '@svcboot/middleware-jwt';
import { traceDefinition } from '@svcboot/middleware-trace';

/** Every entry kind svcboot ships, for `boot({ plugins: allPlugins })`. */
export const allPlugins: readonly AnyEntryPlugin[] = [
  grpcPlugin,
  httpPlugin,
  kvPlugin,
  cachePlugin,
  relationalDbPlugin,
  columnarPlugin,
  grpcClientPlugin,
  httpClientPlugin,
];

/**
 * The middleware definitions of svcboot's middleware packages, for `boot({ middlewares })`
 * (entry-core's own, `auth`, `secure`, `cors`, `csrf`, `rateLimit` and `timeout`, are always there).
 */
export const allMiddlewares: readonly AnyMiddlewareDefinition[] = [traceDefinition, jwtDefinition];
