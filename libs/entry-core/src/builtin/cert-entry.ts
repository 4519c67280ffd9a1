import { readFileSync } from 'node:fs';
import { z } from '../zod.js';
import { Phase, type Entry, type EntryPlugin } from '../entry.js';
import { emptyTextSchema, entryBaseShape } from '../schema.js';
import type { CertBundle } from './cert-bundle.js';
import { coreError } from '../errors.js';

export const certEntrySchema = z.strictObject({
  ...entryBaseShape,
  caPath: emptyTextSchema.describe(
    "A PEM file of CA certificates to trust (e.g. a Redis or Pushgateway server's)",
  ),
  certPemPath: emptyTextSchema.describe(
    "A PEM certificate: the server's for grpc tls.certEntry, the client's elsewhere",
  ),
  keyPemPath: emptyTextSchema.describe('The PEM private key of certPemPath'),
});
export type CertEntryConfig = z.output<typeof certEntrySchema>;

export type { CertBundle } from './cert-bundle.js';

export const CERT_ENTRY_TYPE = 'CertEntry';

/** `cert:` — CA, certificate and key files that TLS options of other entries name in `certEntry`. */
export class CertEntry implements Entry {
  readonly type = CERT_ENTRY_TYPE;
  readonly bundle: CertBundle;

  constructor(
    readonly name: string,
    readonly description: string,
    files: { caPath: string; certPemPath: string; keyPemPath: string },
    configPath: string,
  ) {
    const read = (field: string, file: string): Buffer | undefined => {
      if (file === '') return undefined;
      try {
        return readFileSync(file);
      } catch (err) {
        throw coreError(
          'SVC_CERT_UNREADABLE',
          [configPath, field, file, (err as NodeJS.ErrnoException).code ?? (err as Error).message],
          { cause: err },
        );
      }
    };
    // Read when the app is created, so a wrong path fails before anything starts.
    this.bundle = {};
    const ca = read('caPath', files.caPath);
    const cert = read('certPemPath', files.certPemPath);
    const key = read('keyPemPath', files.keyPemPath);
    if (ca) this.bundle.ca = ca;
    if (cert) this.bundle.cert = cert;
    if (key) this.bundle.key = key;
  }

  async bootstrap(): Promise<void> {}
  async interrupt(): Promise<void> {}
}

export const certPlugin: EntryPlugin<CertEntryConfig, CertEntry> = {
  key: 'cert',
  packageName: '@svcboot/entry-core',
  entryType: CERT_ENTRY_TYPE,
  phase: Phase.Builtin,
  schema: certEntrySchema,
  create: (config, ctx) => new CertEntry(config.name, config.description, config, ctx.configPath),
};
