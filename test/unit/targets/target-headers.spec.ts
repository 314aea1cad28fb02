import { buildRequestHeaders, type TargetRequest } from '../../../src/delivery/target-invoker';
import {
  MAX_TARGET_HEADERS,
  reservedHeaderReason,
  targetHeaderProblems,
} from '../../../src/targets/target-headers';

describe('target header rules', () => {
  it.each([
    [{}],
    [{ 'X-Team': 'billing' }],
    [{ 'User-Agent': 'acme/1.0', Accept: 'application/json', 'X-Empty': '' }],
    [{ "x-weird!#$%&'*+-.^_`|~": 'ok' }],
    [{ 'X-Max': 'v'.repeat(1024) }],
    [Object.fromEntries(Array.from({ length: MAX_TARGET_HEADERS }, (_, i) => [`X-${i}`, 'v']))],
  ])('accepts %j', (headers) => {
    expect(targetHeaderProblems(headers)).toEqual([]);
  });

  it.each([
    ['not an object', null, /must be an object/],
    ['an array', ['X-A: 1'], /must be an object/],
    ['a string', 'X-A: 1', /must be an object/],
    [
      'too many',
      Object.fromEntries(Array.from({ length: MAX_TARGET_HEADERS + 1 }, (_, i) => [`X-${i}`, 'v'])),
      /at most 20 entries/,
    ],
    ['an empty name', { '': 'v' }, /not a valid HTTP token/],
    ['a name with a space', { 'X A': 'v' }, /not a valid HTTP token/],
    ['a name with a colon', { 'X-A:': 'v' }, /not a valid HTTP token/],
    ['a name with a newline', { 'X-A\r\nX-B': 'v' }, /not a valid HTTP token/],
    ['a non-ASCII name', { 'X-Café': 'v' }, /not a valid HTTP token/],
    ['a name too long', { ['X'.repeat(257)]: 'v' }, /not a valid HTTP token/],
    ['a value with CR LF', { 'X-A': 'v\r\nX-B: injected' }, /printable ASCII/],
    ['a value with a tab', { 'X-A': 'a\tb' }, /printable ASCII/],
    ['a value with DEL', { 'X-A': 'a\u007fb' }, /printable ASCII/],
    ['a Latin-1 value', { 'X-A': 'café' }, /printable ASCII/],
    ['a value too long', { 'X-A': 'v'.repeat(1025) }, /at most 1024 characters/],
    ['a number value', { 'X-A': 1 }, /string value/],
    ['a null value', { 'X-A': null }, /string value/],
    ['a duplicate name', { 'X-A': '1', 'x-A': '2' }, /more than once/],
  ])('refuses %s', (_label, headers, message) => {
    const problems = targetHeaderProblems(headers);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('reports every problem at once', () => {
    expect(targetHeaderProblems({ Host: 'a', Cookie: 'b', 'X-A': '\n' })).toHaveLength(3);
  });

  it.each([
    'Host',
    'content-length',
    'Transfer-Encoding',
    'CONNECTION',
    'Keep-Alive',
    'TE',
    'Upgrade',
    'Expect',
    'Content-Type',
    'Idempotency-Key',
    'X-Dueline-Run-Id',
    'x-dueline-signature',
    'X-Dueline-Anything-New',
    'webhook-id',
    'Webhook-Signature',
    'webhook-timestamp',
    'traceparent',
    'TraceState',
  ])('reserves %s for dueline', (name) => {
    expect(reservedHeaderReason(name)).not.toBeNull();
  });

  it.each(['Authorization', 'proxy-authorization', 'Cookie'])(
    'refuses the credential header %s and points at signingSecret',
    (name) => {
      expect(reservedHeaderReason(name)).toMatch(/credential.*signingSecret/);
    },
  );

  it.each(['User-Agent', 'Accept', 'X-Request-Source', 'X-Duelinefoo', 'Forwarded', 'Webhooks'])(
    'leaves %s to the tenant',
    (name) => {
      expect(reservedHeaderReason(name)).toBeNull();
    },
  );

  // Registration must refuse whatever the invoker would drop or overwrite: a header that is
  // accepted and then silently not sent would mislead the tenant.
  it('refuses every header the invoker drops or overrides', () => {
    const candidates = [
      'Host',
      'Content-Length',
      'Transfer-Encoding',
      'Connection',
      'Keep-Alive',
      'Proxy-Connection',
      'Proxy-Authorization',
      'Proxy-Authenticate',
      'TE',
      'Trailer',
      'Upgrade',
      'Expect',
      'Content-Type',
      'Content-Encoding',
      'Accept-Encoding',
      'Idempotency-Key',
      'X-Dueline-Run-Id',
      'X-Dueline-Attempt',
      'X-Dueline-Fencing-Token',
      'X-Dueline-Scheduled-At',
      'X-Dueline-Timestamp',
      'X-Dueline-Signature',
      'X-Dueline-Other',
      'User-Agent',
      'Accept',
      'X-Team',
      'Authorization',
      'Cookie',
    ];
    const marker = 'registered-value';
    const request: TargetRequest = {
      url: 'https://example.com/',
      method: 'POST',
      headers: Object.fromEntries(candidates.map((name) => [name, marker])),
      timeoutMs: 1000,
      body: {},
      signingSecrets: ['a-signing-secret-of-some-length'],
      idempotencyKey: 'run-1',
      runId: 'run-1',
      attempt: 1,
      fencingToken: 1,
      scheduledAt: '2030-01-01T00:00:00Z',
    };
    const sent = buildRequestHeaders(request, '{}', 0);
    const sentAsRegistered = new Set(
      Object.entries(sent)
        .filter(([, value]) => value === marker)
        .map(([name]) => name.toLowerCase()),
    );
    const notSentAsRegistered = candidates.filter(
      (name) => !sentAsRegistered.has(name.toLowerCase()),
    );
    expect(notSentAsRegistered.length).toBeGreaterThan(0);
    for (const name of notSentAsRegistered) {
      expect({ name, reason: reservedHeaderReason(name) }).toEqual({
        name,
        reason: expect.any(String),
      });
    }
  });
});
