import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';

export interface TracingHandle {
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Registers the process's tracer provider: the W3C trace-context propagator, an async-hooks
 * context manager, and the given span processors (by default a batching OTLP/HTTP exporter
 * that reads the standard OTEL_EXPORTER_OTLP_* variables itself). main.ts calls this only when
 * tracing is configured; tests pass an in-memory exporter's processor.
 */
export function startTracing(options: {
  serviceName: string;
  spanProcessors?: SpanProcessor[];
}): TracingHandle {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: options.spanProcessors ?? [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return { shutdown: () => provider.shutdown() };
}
