export {
  activeTraceparent,
  contextOf,
  inSpan,
  linkTo,
  markError,
  propagationHeaders,
  SpanKind,
  startRootSpan,
  startSpan,
  traceIdOf,
  tracingActive,
  traceparentOf,
} from './run-trace';
export { startTracing, type TracingHandle } from './tracer-provider';
