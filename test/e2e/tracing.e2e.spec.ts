import { context, propagation, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { startTracing, type TracingHandle } from '../../src/tracing';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';

const TOKEN = 'bearer-token-that-must-not-be-traced';
const SECRET = `whsec_${Buffer.alloc(32, 99).toString('base64')}`;

/**
 * OpenTelemetry with the official SDK and an in-memory exporter: a run's spans from create to
 * completion share the run's trace, the target receives traceparent, and the trace id is kept
 * on the run and its attempts. No span carries a secret.
 */
describe('traces', () => {
  let memory: InMemorySpanExporter;
  let tracing: TracingHandle;
  let w: ExecutionWorld;
  let target: string;

  beforeAll(async () => {
    memory = new InMemorySpanExporter();
    tracing = startTracing({
      serviceName: 'dueline-test',
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
    w = await startExecutionWorld('api,poller,worker,relay');
    const res = await w.auth(w.t.http.post('/targets')).send({
      name: 'traced',
      url: w.sink.url(),
      signingSecret: SECRET,
      auth: { type: 'bearer', token: TOKEN },
    });
    expect(res.status).toBe(201);
    target = res.body.id;
  });
  afterAll(async () => {
    await w.close();
    await tracing.shutdown();
    // The API's globals outlive this file in the same Jest worker: leave tracing off.
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const spansOf = (traceId: string) =>
    memory.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

  it('a scheduled run: create, dispatch, claim, target call and completion in one trace', async () => {
    const res = await w
      .auth(w.t.http.post('/schedules'))
      .set('Idempotency-Key', 'traced-schedule-1')
      .send({
        name: 'traced',
        targetId: target,
        runAt: new Date(Date.now() + 1500).toISOString(),
      });
    expect(res.status).toBe(201);
    const [create] = memory.getFinishedSpans().filter((s) => s.name === 'schedule.create');
    expect(create.attributes['dueline.schedule_id']).toBe(res.body.id);

    const run = await eventually(
      async () => {
        const page = await w.auth(w.t.http.get(`/schedules/${res.body.id}/runs`));
        const [item] = page.body.items;
        expect(item?.state).toBe('SUCCEEDED');
        return w.run(item.id);
      },
      { timeoutMs: 20_000 },
    );
    expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(run.traceId).not.toBe(create.spanContext().traceId);
    await eventually(async () =>
      expect(named(spansOf(run.traceId), 'run.complete')).toHaveLength(1),
    );
    const spans = spansOf(run.traceId);

    const [dispatch] = named(spans, 'run.dispatch');
    expect(dispatch.attributes['dueline.run_id']).toBe(run.id);
    // The run's trace starts at dispatch and links back to the request that created it.
    expect(dispatch.parentSpanContext).toBeUndefined();
    expect(dispatch.links.map((l) => l.context.spanId)).toEqual([create.spanContext().spanId]);
    const [claim] = named(spans, 'run.claim');
    const [call] = named(spans, 'target.call');
    const [complete] = named(spans, 'run.complete');
    for (const span of [claim, call, complete]) {
      expect(span.parentSpanContext?.spanId).toBe(dispatch.spanContext().spanId);
    }
    expect(call.attributes).toMatchObject({
      'http.response.status_code': 200,
      'dueline.outcome': 'succeeded',
      'dueline.attempt': 1,
    });
    expect(complete.attributes['dueline.state']).toBe('SUCCEEDED');

    // The target got the call's traceparent; the attempt keeps the trace id.
    const [req] = w.sink.forRun(run.id);
    expect(req.headers.traceparent).toBe(`00-${run.traceId}-${call.spanContext().spanId}-01`);
    expect(run.attempts[0].traceId).toBe(run.traceId);
  });

  it('a manual trigger roots the run trace in the API span; a retry is a second call in it', async () => {
    w.sink.behave((r) => ({ status: r.headers['x-dueline-attempt'] === '1' ? 503 : 200 }));
    const schedule = await w.createSchedule(target);
    const runId = await w.trigger(schedule);
    const run = await eventually(async () => {
      const r = await w.run(runId);
      expect(r.state).toBe('SUCCEEDED');
      return r;
    });
    await eventually(async () =>
      expect(named(spansOf(run.traceId), 'run.complete')).toHaveLength(2),
    );
    const spans = spansOf(run.traceId);
    const [root] = named(spans, 'run.trigger');
    expect(root.attributes['dueline.run_id']).toBe(runId);
    const calls = named(spans, 'target.call');
    expect(calls.map((c) => c.attributes['http.response.status_code']).sort()).toEqual([200, 503]);
    expect(run.attempts.map((a: { traceId: string }) => a.traceId)).toEqual([
      run.traceId,
      run.traceId,
    ]);
  });

  it('no span carries a secret, a token or an Authorization header', () => {
    const text = JSON.stringify(
      memory.getFinishedSpans().map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        links: s.links.map((l) => l.attributes ?? {}),
        status: s.status,
        resource: s.resource.attributes,
      })),
    );
    expect(memory.getFinishedSpans().length).toBeGreaterThan(8);
    for (const secret of [TOKEN, SECRET, SECRET.slice(6), w.tenant.apiKey, 'authorization']) {
      expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
    }
  });
});
