import { Phase, entryGetter, registerEntryKind, type EntryPlugin } from '@svcboot/entry-core';
import { registerTracedClient } from '@svcboot/entry-core/toolkit';
import { httpClientTracing } from './client-span.js';
import { HTTP_CLIENT_ENTRY_TYPE, HttpClientEntry } from './entry.js';
import { httpClientSchema, type HttpClientConfig } from './schema.js';

/**
 * The `httpclient` entry kind. Connector phase: bootstrapped before the servers whose handlers
 * use it, and closed after they drained.
 */
export const httpClientPlugin: EntryPlugin<HttpClientConfig, HttpClientEntry> = {
  key: 'httpclient',
  packageName: '@svcboot/entry-httpclient',
  entryType: HTTP_CLIENT_ENTRY_TYPE,
  phase: Phase.Connector,
  schema: httpClientSchema,
  create: (config, ctx) => new HttpClientEntry(config, ctx),
};

registerEntryKind(httpClientPlugin);
// Outbound calls get client spans once an entry traces: @svcboot/middleware-trace hands its tracer
// provider over (it knows this package by name; neither imports the other).
registerTracedClient('@svcboot/entry-httpclient', httpClientTracing);

/** `httpClient(app, 'billing')`: the `httpclient` entry of that name, or an error naming the ones there are. */
export const httpClient = entryGetter(httpClientPlugin);

export { HttpClientEntry, HTTP_CLIENT_ENTRY_TYPE, type HttpClientInit } from './entry.js';
export { httpClientSchema, type HttpClientConfig } from './schema.js';
export { httpClientErrorCatalogue, HttpClientCallError } from './errors.js';
export { HttpClientSpanMiddleware, httpClientTracing } from './client-span.js';
export { HttpClientMetrics } from './metrics.js';
export { parseBaseUrl, type BaseUrl } from './base-url.js';
export { isIdempotent, RetryBudget, backoffMs, type RetryPolicy } from './retry.js';
