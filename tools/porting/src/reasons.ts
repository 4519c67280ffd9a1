import type { ConfigIssue } from '@svcboot/entry-core';

/**
 * Why svcboot may refuse a file written for rk-boot: each reason is a heading id on
 * docs/porting-from-rk-boot.md ("Why a ported file can still be refused"), matched by the
 * issue's stable code or, for svcboot's own refusals that predate the porting codes, by its
 * message.
 */
export interface RefusalReason {
  /** The id on the porting page (`#refused-go-only`). */
  readonly id: string;
  /** Whether it still refuses in the porting mode (app.porting: rk-boot). */
  readonly inPortingMode: boolean;
  matches(issue: ConfigIssue): boolean;
}

const byCode =
  (code: string) =>
  (i: ConfigIssue): boolean =>
    i.code === code;

export const REFUSAL_REASONS: readonly RefusalReason[] = [
  { id: 'refused-go-only', inPortingMode: true, matches: byCode('SVC_PORTING_GO_ONLY') },
  { id: 'refused-one-port', inPortingMode: false, matches: byCode('SVC_PORTING_ONE_PORT') },
  { id: 'refused-unsupported', inPortingMode: true, matches: byCode('SVC_PORTING_UNSUPPORTED') },
  { id: 'refused-conflict', inPortingMode: true, matches: byCode('SVC_PORTING_CONFLICT') },
  {
    id: 'refused-rk-ignored',
    inPortingMode: false,
    matches: (i) => i.code === 'SVC_PORTING_RK_IGNORED' || /^unknown key "/.test(i.message),
  },
  {
    id: 'refused-clickhouse-native-port',
    inPortingMode: true,
    matches: byCode('SVC_COLUMNAR_NATIVE_PORT'),
  },
  {
    id: 'refused-jwt-key',
    inPortingMode: true,
    matches: (i) => i.code === 'SVC_JWT_KEY_MISSING' || i.code === 'SVC_JWT_KEY_INVALID',
  },
  {
    id: 'refused-template-placeholder',
    inPortingMode: true,
    matches: (i) => /"header:<name>"/.test(i.message),
  },
  {
    id: 'refused-no-database',
    inPortingMode: true,
    matches: (i) => /\.database$/.test(i.path) && /required field is missing/.test(i.message),
  },
];

export function reasonOf(issue: ConfigIssue): RefusalReason | undefined {
  return REFUSAL_REASONS.find((r) => r.matches(issue));
}
