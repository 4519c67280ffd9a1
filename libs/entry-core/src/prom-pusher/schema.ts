import { z } from '../zod.js';
import { described } from '../described.js';
import { promEndpointSchema } from '../middleware/options.js';
import { emptyTextSchema, offSchema } from '../schema.js';

/** `prom.pusher`: rk-boot's keys for pushing the entry's metrics to a Prometheus Pushgateway. */
export const promPusherSchema = z
  .strictObject({
    enabled: offSchema.describe("Push the entry's metrics to a Pushgateway"),
    intervalMs: described(
      z.number().int().min(100).default(1000),
      'Time between pushes (after a failure the wait doubles, up to a minute or intervalMs).',
    ),
    jobName: emptyTextSchema.describe("The `job` of the grouping key; empty: the app's name."),
    remoteAddress: emptyTextSchema.describe(
      'The Pushgateway: `host:port` or `http(s)://host:port[/prefix]`; required when enabled.',
    ),
    basicAuth: emptyTextSchema.describe('`user:pass` for HTTP basic authentication; never logged.'),
    certEntry: emptyTextSchema.describe(
      "A `cert:` entry: its CA verifies the Pushgateway, its certificate and key (if any) are the client's; the scheme becomes https.",
    ),
    instance: emptyTextSchema.describe(
      'The `instance` of the grouping key; empty: `<hostname>:<entry port>`. Not in rk-boot.',
    ),
  })
  .superRefine((p, ctx) => {
    if (p.enabled && p.remoteAddress.trim() === '')
      ctx.addIssue({
        code: 'custom',
        path: ['remoteAddress'],
        message:
          'remoteAddress is required when prom.pusher is enabled: the Pushgateway as host:port or http(s)://host:port',
      });
    if (p.basicAuth !== '' && !p.basicAuth.includes(':'))
      ctx.addIssue({
        code: 'custom',
        path: ['basicAuth'],
        message: 'basicAuth must be "user:pass"',
      });
  })
  .prefault({});
export type PromPusherConfig = z.output<typeof promPusherSchema>;

/**
 * A server entry's `prom`: the scrape endpoint (`enabled`, `path`) and the pusher. Use it instead
 * of promEndpointSchema in an entry's schema.
 */
export const promSchema = promEndpointSchema
  .unwrap()
  .extend({ pusher: promPusherSchema })
  .prefault({});
export type PromConfig = z.output<typeof promSchema>;
