// The address and URL checks on their own: no packet is sent anywhere.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkSourceUrl, isPublicAddress, parseAllowedSources, type SourcePolicy } from '../../src/sources/url-policy.ts'
import { fetchError, guardedLookup } from '../../src/sources/fetch-source.ts'

const closed: SourcePolicy = { allowPrivate: false, allowedPrefixes: [] }

const BLOCKED = [
  '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.0.1',
  '100.64.0.1', '100.127.255.254', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1', '192.0.2.1',
  '::', '::1', 'fe80::1', 'fc00::1', 'fd00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
  '64:ff9b::7f00:1', '2002:7f00:1::', '2001:db8::1', 'not-an-ip',
  // IPv4-compatible (::/96, deprecated), as the URL parser writes [::127.0.0.1] and in other spellings; retired and site-local blocks
  '::7f00:1', '::127.0.0.1', '::a00:1', '::a9fe:a9fe', '::8.8.8.8', '3ffe::1', 'fec0::1', '100::1', '5f00::1', '2001:10::1'
]
const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '::ffff:8.8.8.8']

test('only globally routable unicast addresses are public', () => {
  for (const address of BLOCKED) assert.equal(isPublicAddress(address), false, address)
  for (const address of PUBLIC) assert.equal(isPublicAddress(address), true, address)
})

test('URLs: http(s) only, no credentials, default ports, no literal non-public IPs in any spelling', () => {
  const refused = (url: string, code = 'THUMBD_SOURCE_FORBIDDEN') => assert.throws(() => checkSourceUrl(url, closed), { code }, url)
  for (const url of [
    'file:///etc/passwd', 'ftp://example.com/a.jpg', 'gopher://example.com/', 'data:image/png;base64,AAAA', 'javascript:alert(1)',
    'https://user:pass@example.com/a.jpg', 'https://user@example.com/a.jpg', 'https://example.com:8443/a.jpg',
    'http://127.0.0.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/', 'http://0x7f000001/', 'http://127.1/',
    'http://0/', 'http://0.0.0.0/', 'http://[::1]/', 'http://[::]/', 'http://[::ffff:127.0.0.1]/', 'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://169.254.169.254/latest/meta-data/', 'http://[fd00::1]/', 'http://10.1.2.3/', 'http://[64:ff9b::a00:1]/', 'http://[2002:a00:1::]/',
    // Policy level only: such an address is never connected to in a test (this machine routes it off loopback).
    'http://[::127.0.0.1]/', 'http://[::7f00:1]/', 'http://[0:0:0:0:0:0:a9fe:a9fe]/'
  ]) refused(url)
  refused('not a url', 'THUMBD_BAD_OPTIONS')
  assert.equal(checkSourceUrl('https://example.com/a.jpg', closed).hostname, 'example.com')
  assert.equal(checkSourceUrl('http://8.8.8.8/a.jpg', closed).hostname, '8.8.8.8')
})

test('ALLOWED_SOURCES is matched on the parsed URL, and may name a port', () => {
  const policy: SourcePolicy = { allowPrivate: false, allowedPrefixes: parseAllowedSources(['https://example.com/', 'https://cdn.example.net:8443/media']) }
  assert.ok(checkSourceUrl('https://example.com/a/b.jpg', policy))
  assert.ok(checkSourceUrl('https://cdn.example.net:8443/media/x.mp4', policy))
  for (const url of [
    'https://example.com@evil.test/', 'https://example.com.evil.test/', 'http://example.com/', 'https://evil.test/https://example.com/',
    'https://cdn.example.net:8443/mediafake/x.mp4', 'https://cdn.example.net/media/x.mp4', 'https://example.com:444/',
    // Encoded separators and dot segments, which the origin would decode and walk out of the prefix with.
    'https://cdn.example.net:8443/media/..%2Fother/x.jpg', 'https://cdn.example.net:8443/media/%2e%2e/other/x.jpg',
    'https://cdn.example.net:8443/media/.%2E/x.jpg', 'https://cdn.example.net:8443/media/a%5C..%5Cx.jpg', 'https://cdn.example.net:8443/media/a%2fb.jpg'
  ]) assert.throws(() => checkSourceUrl(url, policy), { code: 'THUMBD_SOURCE_FORBIDDEN' }, url)
  assert.throws(() => parseAllowedSources(['ftp://x/']))
  assert.throws(() => parseAllowedSources(['not a url']))
})

test('the DNS hook refuses a host with any non-public answer, before a socket exists', async () => {
  const answer = (addresses: string[]) => async () => addresses.map(address => ({ address, family: address.includes(':') ? 6 : 4 }))
  const lookup = (addresses: string[], policy = closed) => new Promise<unknown>((resolve, reject) => {
    guardedLookup(answer(addresses), policy)('host.test', { all: true }, (err, result) => err ? reject(err) : resolve(result))
  })
  for (const bad of [['10.0.0.1'], ['169.254.169.254'], ['fd00::1'], ['127.0.0.1'], ['8.8.8.8', '192.168.0.1'], ['::ffff:127.0.0.1']]) {
    await assert.rejects(lookup(bad), { code: 'THUMBD_BLOCKED_ADDRESS' }, bad.join())
  }
  assert.deepEqual(await lookup(['8.8.8.8']), [{ address: '8.8.8.8', family: 4 }])
  assert.deepEqual(await lookup(['10.0.0.1'], { allowPrivate: true, allowedPrefixes: [] }), [{ address: '10.0.0.1', family: 4 }])
})

test('a refusal says which setting would allow it: ALLOW_PRIVATE_SOURCES for an address, ALLOWED_SOURCES for a port', async () => {
  for (const url of ['http://127.0.0.1/a.jpg', 'http://[::1]/a.jpg', 'http://10.1.2.3/a.jpg']) {
    assert.throws(() => checkSourceUrl(url, closed), { code: 'THUMBD_SOURCE_FORBIDDEN', message: /ALLOW_PRIVATE_SOURCES=true/ }, url)
  }
  assert.throws(() => checkSourceUrl('https://example.com:8443/a.jpg', closed), (err: Error) => {
    assert.match(err.message, /port 8443/)
    assert.match(err.message, /ALLOWED_SOURCES entry names it \(e\.g\. https:\/\/example\.com:8443\/\)/)
    return true
  })
  // A hostname whose DNS answer is private: refused by the lookup hook, then worded by fetchError.
  const blocked = await new Promise<Error>(resolve => {
    guardedLookup(async () => [{ address: '10.0.0.1', family: 4 }], closed)('host.test', { all: true }, err => resolve(err!))
  })
  assert.match(fetchError(blocked).message, /non-public address .*ALLOW_PRIVATE_SOURCES=true/)
})
