import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Output } from '@svcboot/entry-core';

const KINDS = ['internal', 'server', 'client', 'producer', 'consumer'] as const;
const STATUS = ['unset', 'ok', 'error'] as const;

/** One span as a JSON line (`exporter.file`): ids, name, kind, times in µs since the epoch, attributes, status, events. */
export function spanLine(s: ReadableSpan): string {
  const sc = s.spanContext();
  return `${JSON.stringify({
    traceId: sc.traceId,
    spanId: sc.spanId,
    parentSpanId: s.parentSpanContext?.spanId ?? '',
    name: s.name,
    kind: KINDS[s.kind] ?? String(s.kind),
    startTimeUnixMicro: Math.round(hrTimeToMicroseconds(s.startTime)),
    endTimeUnixMicro: Math.round(hrTimeToMicroseconds(s.endTime)),
    attributes: s.attributes,
    status: s.status.message
      ? { code: STATUS[s.status.code], message: s.status.message }
      : { code: STATUS[s.status.code] },
    events: s.events.map((e) => ({
      name: e.name,
      timeUnixMicro: Math.round(hrTimeToMicroseconds(e.time)),
      attributes: e.attributes ?? {},
    })),
    resource: s.resource.attributes,
    scope: s.instrumentationScope.name,
  })}\n`;
}

/** Writes spans as JSON lines to one of the app's outputs (`stdout`, `stderr` or a file). */
export class FileSpanExporter implements SpanExporter {
  constructor(private readonly output: Output) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    let text = '';
    for (const s of spans) text += spanLine(s);
    this.output.write(text);
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
  async forceFlush(): Promise<void> {}
}
