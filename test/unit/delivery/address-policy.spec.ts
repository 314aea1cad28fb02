import {
  type AddressClass,
  NO_ALLOWED_HOSTS,
  canonicalIp,
  checkResolvedAddress,
  checkTargetUrl,
  classifyAddress,
  parseAllowedHosts,
} from '../../../src/delivery/address-policy';

describe('classifyAddress', () => {
  const cases: [string, AddressClass][] = [
    // IPv4
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.5', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.100.100.200', 'metadata'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['172.15.255.255', 'public'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', 'public'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.20.0.0', 'public'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['::127.0.0.1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::253', 'private'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['4000::1', 'reserved'],
  ];

  it.each(cases)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });

  it.each(['example.com', '127.1', '2130706433', '1.2.3.4.5', '', ':::1'])(
    'rejects non-IP %j',
    (input) => {
      expect(() => classifyAddress(input)).toThrow(TypeError);
    },
  );
});

describe('canonicalIp', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['[::1]', '0:0:0:0:0:0:0:1'],
    ['FD00:EC2::254', 'fd00:ec2:0:0:0:0:0:254'],
    ['nope', null],
  ])('%s -> %s', (input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });
});

describe('parseAllowedHosts', () => {
  it('treats undefined and blanks as an empty list', () => {
    for (const csv of [undefined, '', ' , ,']) {
      const allowed = parseAllowedHosts(csv);
      expect(allowed.names.size + allowed.ips.size + allowed.cidrs.length).toBe(0);
      expect(allowed.suffixes).toEqual([]);
    }
  });

  it('parses names, wildcards, IPs and CIDRs case-insensitively', () => {
    const allowed = parseAllowedHosts(
      ' Billing.Internal , *.svc.cluster.local, 127.0.0.1, [::1], FD00::1, 10.0.0.0/8, fd00::/8, localhost. ',
    );
    expect([...allowed.names].sort()).toEqual(['billing.internal', 'localhost']);
    expect(allowed.suffixes).toEqual(['.svc.cluster.local']);
    expect([...allowed.ips].sort()).toEqual(['0:0:0:0:0:0:0:1', '127.0.0.1', 'fd00:0:0:0:0:0:0:1']);
    expect(allowed.cidrs).toHaveLength(2);
  });

  it.each([
    ['localhost:8080', /ports are not supported/],
    ['http://example.com/', /not a URL/],
    ['10.0.0.0/33', /not a valid CIDR/],
    ['10.0.0/8', /not a valid CIDR/],
    ['example..com', /not a valid hostname/],
    ['*.bad..name', /not a valid wildcard/],
    ['*', /not a valid hostname/],
    ['exa mple.com', /not a valid hostname/],
  ])('throws on %j', (csv, message) => {
    expect(() => parseAllowedHosts(csv)).toThrow(message);
    expect(() => parseAllowedHosts(csv)).toThrow(/TARGET_ALLOWED_HOSTS/);
  });
});

describe('checkTargetUrl', () => {
  const allowed = parseAllowedHosts(
    'localhost,127.0.0.1,billing.internal,*.svc.cluster.local,10.0.0.0/8,169.254.169.254',
  );
  const cidrOnly = parseAllowedHosts('169.254.0.0/16,fd00::/8,metadata.google.internal');

  const ok: [string, string, typeof allowed][] = [
    ['public https', 'https://api.example.com/hook?x=1', NO_ALLOWED_HOSTS],
    ['public http with port', 'http://api.example.com:8080/hook', NO_ALLOWED_HOSTS],
    ['public IPv4 literal', 'http://93.184.216.34/', NO_ALLOWED_HOSTS],
    ['public IPv6 literal', 'http://[2606:4700:4700::1111]/', NO_ALLOWED_HOSTS],
    ['allowed loopback IP', 'http://127.0.0.1:3000/', allowed],
    ['mapped form of an allowed IP', 'http://[::ffff:127.0.0.1]/', allowed],
    ['allowed localhost name', 'http://localhost:3000/', allowed],
    ['allowed internal name', 'http://billing.internal/', allowed],
    ['allowed wildcard', 'http://jobs.default.svc.cluster.local/', allowed],
    ['allowed by CIDR', 'http://10.1.2.3/', allowed],
    ['metadata listed exactly', 'http://169.254.169.254/', allowed],
    ['link-local via CIDR', 'http://169.254.1.1/', cidrOnly],
    ['ULA via CIDR', 'http://[fd00::5]/', cidrOnly],
  ];

  it.each(ok)('accepts %s', (_label, url, list) => {
    const result = checkTargetUrl(url, list);
    expect(result).toEqual({ ok: true, url: new URL(url) });
  });

  const refused: [string, string, typeof allowed, 'invalid_url' | 'address_refused', RegExp][] = [
    ['not a URL', 'not a url', NO_ALLOWED_HOSTS, 'invalid_url', /not a valid absolute URL/],
    ['empty', '', NO_ALLOWED_HOSTS, 'invalid_url', /required/],
    ['relative', '/hook', NO_ALLOWED_HOSTS, 'invalid_url', /not a valid absolute URL/],
    ['ftp', 'ftp://example.com/', NO_ALLOWED_HOSTS, 'invalid_url', /scheme ftp is not allowed/],
    ['file', 'file:///etc/passwd', NO_ALLOWED_HOSTS, 'invalid_url', /scheme file/],
    ['userinfo', 'https://user:pw@example.com/', NO_ALLOWED_HOSTS, 'invalid_url', /credentials/],
    ['user only', 'https://user@example.com/', NO_ALLOWED_HOSTS, 'invalid_url', /credentials/],
    [
      'too long',
      `https://example.com/${'a'.repeat(2048)}`,
      NO_ALLOWED_HOSTS,
      'invalid_url',
      /longer than 2048/,
    ],
    [
      'loopback literal',
      'http://127.0.0.1/',
      NO_ALLOWED_HOSTS,
      'address_refused',
      /^target host 127\.0\.0\.1 is a loopback address; list it in TARGET_ALLOWED_HOSTS to allow it$/,
    ],
    ['decimal loopback', 'http://2130706433/', NO_ALLOWED_HOSTS, 'address_refused', /loopback/],
    ['hex loopback', 'http://0x7f.1/', NO_ALLOWED_HOSTS, 'address_refused', /loopback/],
    [
      'mapped loopback',
      'http://[::ffff:127.0.0.1]/',
      NO_ALLOWED_HOSTS,
      'address_refused',
      /loopback/,
    ],
    ['IPv6 loopback', 'http://[::1]:8080/', NO_ALLOWED_HOSTS, 'address_refused', /loopback/],
    ['private', 'http://192.168.0.10/', allowed, 'address_refused', /private address/],
    ['unspecified', 'http://0.0.0.0:80/', NO_ALLOWED_HOSTS, 'address_refused', /unspecified/],
    ['metadata', 'http://169.254.169.254/latest', NO_ALLOWED_HOSTS, 'address_refused', /metadata/],
    [
      'metadata not unlocked by CIDR',
      'http://169.254.169.254/',
      cidrOnly,
      'address_refused',
      /metadata/,
    ],
    ['AWS IPv6 metadata', 'http://[fd00:ec2::254]/', cidrOnly, 'address_refused', /metadata/],
    ['localhost', 'http://localhost:3000/', NO_ALLOWED_HOSTS, 'address_refused', /loopback name/],
    [
      'localhost trailing dot',
      'http://LOCALHOST./',
      NO_ALLOWED_HOSTS,
      'address_refused',
      /localhost/,
    ],
    ['*.localhost', 'http://app.localhost/', NO_ALLOWED_HOSTS, 'address_refused', /loopback name/],
    [
      'GCP metadata name',
      'http://metadata.google.internal/computeMetadata/v1/',
      NO_ALLOWED_HOSTS,
      'address_refused',
      /cloud metadata service name/,
    ],
    ['*.internal', 'http://ip-10-0-0-1.ec2.internal/', allowed, 'address_refused', /internal name/],
    ['*.local', 'http://printer.local/', NO_ALLOWED_HOSTS, 'address_refused', /mDNS/],
    ['single label', 'http://redis:6379/', NO_ALLOWED_HOSTS, 'address_refused', /single-label/],
    [
      'wildcard does not match apex',
      'http://svc.cluster.local/',
      allowed,
      'address_refused',
      /svc\.cluster\.local/,
    ],
  ];

  it.each(refused)('refuses %s', (_label, url, list, code, reason) => {
    const result = checkTargetUrl(url, list);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe(code);
    expect(result.reason).toMatch(reason);
  });
});

describe('checkResolvedAddress', () => {
  const allowed = parseAllowedHosts('hooks.corp.example,10.9.0.0/16,192.168.1.5');

  it.each([
    ['public name, public address', 'api.example.com', '93.184.216.34', true],
    ['public name rebound to private', 'api.example.com', '10.0.0.5', false],
    ['public name rebound to mapped loopback', 'api.example.com', '::ffff:127.0.0.1', false],
    ['public name rebound to metadata', 'api.example.com', '169.254.169.254', false],
    ['allowed name to private', 'hooks.corp.example', '10.0.0.5', true],
    ['allowed name (case, dot) to private', 'HOOKS.corp.example.', '172.16.0.1', true],
    ['allowed name never unlocks metadata', 'hooks.corp.example', '169.254.169.254', false],
    ['address in allowed CIDR', 'api.example.com', '10.9.3.4', true],
    ['address outside allowed CIDR', 'api.example.com', '10.10.3.4', false],
    ['exact allowed address', 'api.example.com', '192.168.1.5', true],
    ['mapped form of allowed address', 'api.example.com', '::ffff:192.168.1.5', true],
    ['garbage from resolver', 'api.example.com', 'not-an-ip', false],
  ])('%s', (_label, hostname, address, expected) => {
    expect(checkResolvedAddress(hostname, address, allowed).ok).toBe(expected);
  });

  it('explains a rebinding refusal', () => {
    const result = checkResolvedAddress('api.example.com', '10.0.0.5', NO_ALLOWED_HOSTS);
    expect(result).toEqual({
      ok: false,
      classification: 'private',
      reason:
        'target host api.example.com resolved to 10.0.0.5, a private address; list the host or the address in TARGET_ALLOWED_HOSTS to allow it',
    });
  });
});
