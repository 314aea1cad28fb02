import {
  context,
  type Context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * Spans of a run's life, through the OpenTelemetry API. With no tracer provider registered
 * (tracing off) every span is a no-op, and nothing here records a trace id.
 *
 * A run has one trace: its root span is the one that created it (the poller's dispatch, or the
 * API's manual trigger), whose W3C traceparent is stored on the run; the claim, the target call
 * and the completion are children of it, and the target receives the call's traceparent.
 */
const tracer = () => trace.getTracer('dueline');

export { SpanKind };

/** The W3C traceparent of a span, or null when it is not recorded (tracing off, unsampled). */
export function traceparentOf(span: Span): string | null {
  if (!span.isRecording()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return carrier.traceparent ?? null;
}

/** The trace id of a recorded span, or null. */
export function traceIdOf(span: Span): string | null {
  return span.isRecording() ? span.spanContext().traceId : null;
}

/** The context a stored traceparent names (the run's trace), or the root context without one. */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent) return context.active();
  return propagation.extract(context.active(), { traceparent });
}

/** A link to the span a stored traceparent names (e.g. a schedule's create). */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(contextOf(traceparent));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

/** A span that is ended by the caller: for work whose end is not one function's return. */
export function startSpan(name: string, options: SpanOptions, parent?: Context): Span {
  return tracer().startSpan(name, options, parent ?? context.active());
}

/**
 * Whether spans are recorded here (a tracer provider is registered and samples): callers skip
 * work that only feeds spans (reading stored traceparents) when they are not. The probe span is
 * never ended, so never exported.
 */
export function tracingActive(): boolean {
  return tracer().startSpan('probe', {}, ROOT_CONTEXT).isRecording();
}

/** The first span of a new trace (a run's), linked to where it came from. */
export function startRootSpan(name: string, options: SpanOptions): Span {
  return tracer().startSpan(name, options, ROOT_CONTEXT);
}

/** Runs `work` inside a span (active in its async context), ending it and recording failures. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
  parent?: Context,
): Promise<T> {
  return tracer().startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The headers that carry a span's context to a target (W3C traceparent, tracestate). */
export function propagationHeaders(span: Span): Record<string, string> {
  if (!span.isRecording()) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return carrier;
}

/** The traceparent of whatever span is active here (the API request's), or null. */
export function activeTraceparent(): string | null {
  const span = trace.getActiveSpan();
  return span ? traceparentOf(span) : null;
}

export function markError(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
