import { SvcError } from '@svcboot/entry-core';
import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/toolkit';

/** entry-httpclient's errors (codes documented in README.md, "Errors"). */
export const httpClientErrorCatalogue = {
  SVC_HTTPCLIENT_BAD_URL: {
    when: '`baseUrl` is not `http(s)://host[:port][/prefix]` (boot.yaml reports it as SVC_CONFIG_INVALID at its path; this code is for an entry made without the schema)',
    fix: 'write it as http://host:port or https://host:port/prefix; the message says what is wrong with it',
    message: (configPath: string, why: string) => `${configPath}.baseUrl: ${why}`,
  },
  SVC_HTTPCLIENT_UNAVAILABLE: {
    when: 'a call got no response: the backend could not be reached (refused, reset, DNS), or the breaker refused it',
    fix: 'check that the backend is up at `baseUrl`; the error says which call and why',
    message: (client: string, baseUrl: string, what: string, why: string) =>
      `httpclient "${client}" (${baseUrl}): ${what} got no response: ${why}`,
  },
  SVC_HTTPCLIENT_DEADLINE: {
    when: "a call's deadline (the inbound call's less `deadlineMarginMs`, or `timeoutMs`) passed before its response",
    fix: 'raise `timeoutMs` or the caller’s deadline, or find why the backend is slow',
    message: (client: string, baseUrl: string, what: string, ms: number) =>
      `httpclient "${client}" (${baseUrl}): ${what} had no response within its deadline (${ms} ms)`,
  },
  SVC_HTTPCLIENT_NO_REGISTRY: {
    when: '`metricsEntry` names an entry without a metrics registry (not a `grpc` or `httpserver` entry)',
    fix: 'name a grpc or httpserver entry of this app (with `prom.enabled` to serve /metrics), or leave it empty',
    message: (configPath: string, name: string) =>
      `${configPath}.metricsEntry: entry "${name}" has no metrics registry; name a grpc or httpserver entry`,
  },
  SVC_HTTPCLIENT_CLOSED: {
    when: 'a call was made after the app shut the entry down',
    fix: 'make outbound calls only while the app runs',
    message: (name: string) => `httpclient "${name}" is closed (the app is shutting down)`,
  },
} satisfies ErrorCatalogue;

const make = errorFactory(httpClientErrorCatalogue);

export const httpClientErrors = {
  badUrl: (configPath: string, why: string) => make('SVC_HTTPCLIENT_BAD_URL', [configPath, why]),
  unavailable: (client: string, baseUrl: string, what: string, why: string, cause?: unknown) =>
    new HttpClientCallError(
      'SVC_HTTPCLIENT_UNAVAILABLE',
      httpClientErrorCatalogue.SVC_HTTPCLIENT_UNAVAILABLE.message(client, baseUrl, what, why),
      503,
      { cause },
    ),
  deadline: (client: string, baseUrl: string, what: string, ms: number) =>
    new HttpClientCallError(
      'SVC_HTTPCLIENT_DEADLINE',
      httpClientErrorCatalogue.SVC_HTTPCLIENT_DEADLINE.message(client, baseUrl, what, ms),
      504,
    ),
  noRegistry: (configPath: string, name: string) =>
    make('SVC_HTTPCLIENT_NO_REGISTRY', [configPath, name]),
  closed: (name: string) => make('SVC_HTTPCLIENT_CLOSED', [name]),
};

/**
 * An outbound call that got no response: `status` 503 when the backend could not be reached or
 * the breaker refused the call (`SVC_HTTPCLIENT_UNAVAILABLE`), 504 when its deadline passed
 * (`SVC_HTTPCLIENT_DEADLINE`): the status the caller's own answer should have.
 */
export class HttpClientCallError extends SvcError {
  override name = 'HttpClientCallError';
  constructor(
    code: string,
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}
