import { z } from '../zod.js';
import {
  Phase,
  entryBaseShape,
  observabilityShape,
  type Entry,
  type EntryContext,
  type EntryPlugin,
} from '../index.js';

/** A test entry kind that records what happens to it in a shared journal. */
export const probeSchema = z.strictObject({
  ...entryBaseShape,
  ...observabilityShape,
  port: z.number().int().default(0),
  pass: z.string().default(''),
  failBootstrap: z.boolean().default(false),
  interruptDelayMs: z.number().int().default(0),
  nested: z
    .strictObject({ level: z.enum(['low', 'high']).default('low'), size: z.number().default(1) })
    .prefault({}),
});
export type ProbeConfig = z.output<typeof probeSchema>;

export class ProbeEntry implements Entry {
  readonly type = 'ProbeEntry';
  readonly description: string;
  constructor(
    readonly config: ProbeConfig,
    readonly ctx: EntryContext,
    private readonly journal: string[],
  ) {
    this.description = config.description;
  }
  get name(): string {
    return this.config.name;
  }
  async bootstrap(): Promise<void> {
    this.journal.push(`bootstrap ${this.name}`);
    if (this.config.failBootstrap) {
      throw new Error(`cannot reach backend with password ${this.config.pass}`);
    }
  }
  async interrupt(): Promise<void> {
    if (this.config.interruptDelayMs > 0)
      await new Promise((r) => setTimeout(r, this.config.interruptDelayMs));
    this.journal.push(`interrupt ${this.name}`);
  }
  bootstrapPayloads(): Record<string, unknown> {
    return { probePort: this.config.port };
  }
}

export function probePlugin(
  key: string,
  phase: number,
  journal: string[],
): EntryPlugin<ProbeConfig, ProbeEntry> {
  return {
    key,
    packageName: '@svcboot/probe',
    entryType: 'ProbeEntry',
    phase,
    schema: probeSchema,
    create: (config, ctx) => new ProbeEntry(config, ctx, journal),
  };
}

export const Phases = Phase;
