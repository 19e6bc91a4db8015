// Which URLs and addresses a URL source may reach. The URL is checked once parsed (the WHATWG parser
// already turns 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 into 127.0.0.1); each address actually connected
// to is checked again after DNS, on every redirect hop (see fetch-source.ts). Ranges come from ipaddr.js.
import ipaddr from 'ipaddr.js'
import { errors } from '../errors.ts'

export interface SourcePolicy {
  /** ALLOW_PRIVATE_SOURCES: loopback, private and reserved addresses may be reached. */
  allowPrivate: boolean
  /** ALLOWED_SOURCES, parsed; empty: any public http(s) URL on a default port. */
  allowedPrefixes: readonly URL[]
}

/**
 * IPv6 is allowed only inside 2000::/3, the one block IANA hands out as global unicast: everything else
 * (IPv4-compatible ::/96 such as [::127.0.0.1], which ipaddr.js calls plain unicast; site-local; ...) is
 * refused whatever name ipaddr.js gives it. 3ffe::/16 (the retired 6bone) sits inside it and is refused too.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')
const RETIRED_V6 = [ipaddr.parseCIDR('3ffe::/16')]

/** Only globally routable unicast: not loopback, private, link-local, CGNAT, multicast, reserved, NAT64, 6to4, Teredo ... */
export function isPublicAddress (address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let ip = ipaddr.parse(canonicalIPv6(address))
  if (ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress()) ip = ip.toIPv4Address()
  if (ip instanceof ipaddr.IPv6 && (!ip.match(GLOBAL_UNICAST_V6) || RETIRED_V6.some(range => ip.match(range)))) return false
  return ip.range() === 'unicast'
}

/**
 * ipaddr.js reads any IPv6 with a dotted tail as IPv4-mapped ("::8.8.8.8" as ::ffff:8.8.8.8), but it is
 * ::808:808, IPv4-compatible, which the kernel routes as IPv6: the WHATWG parser's spelling is the real one.
 */
function canonicalIPv6 (address: string): string {
  if (!address.includes(':')) return address
  return URL.parse(`http://[${address}]/`)?.hostname.slice(1, -1) ?? address
}

/** What a refusal of a non-public address says to do, if it was meant. */
export const PRIVATE_HINT = '(set ALLOW_PRIVATE_SOURCES=true to let URL sources reach loopback and private networks)'

/** A literal non-public address, or a name that is this host by definition (RFC 6761): refused after DNS unless allowed. */
function isLocalHost (host: string): boolean {
  return ipaddr.isValid(host) ? !isPublicAddress(host) : host === 'localhost' || host.endsWith('.localhost')
}

export function addressAllowed (address: string, policy: SourcePolicy): boolean {
  return policy.allowPrivate || isPublicAddress(address)
}

/** The parsed URL if it may be fetched; throws SOURCE_FORBIDDEN (or BAD_OPTIONS for a non-URL). */
export function checkSourceUrl (raw: string, policy: SourcePolicy): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new errors.BadOptions('url is not a valid absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new errors.SourceForbidden('only http and https URLs')
  if (url.username !== '' || url.password !== '') throw new errors.SourceForbidden('credentials in URLs are not allowed')
  // The parser has already resolved plain dot segments; encoded ones and encoded separators it leaves for
  // the origin to decode, which would walk out of an allowed prefix (/bucket/..%2Fother/x.jpg).
  if (policy.allowedPrefixes.length > 0 && hidesPathSegments(url.pathname)) throw new errors.SourceForbidden('encoded separators or dot segments in the path')
  const listed = policy.allowedPrefixes.some(prefix => matchesPrefix(url, prefix))
  // Literal IPs never reach the DNS hook that guards hostnames, so they are checked here.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  // A refusal names every setting this URL needs, not one per try: a loopback origin on :8000 needs both.
  const alsoPrivate = !policy.allowPrivate && isLocalHost(host) ? `; ${host} is not a public address either, so also ${PRIVATE_HINT.slice(1, -1)}` : ''
  if (policy.allowedPrefixes.length > 0 && !listed) throw new errors.SourceForbidden(`the URL is not under ALLOWED_SOURCES${alsoPrivate}`)
  // Non-default ports only where an ALLOWED_SOURCES entry names them (matchesPrefix compares ports).
  if (url.port !== '' && !listed) throw new errors.SourceForbidden(`port ${url.port} is not a default port: URL sources may use one only where an ALLOWED_SOURCES entry names it (e.g. ${url.protocol}//${url.host}/)${alsoPrivate}`)
  if (ipaddr.isValid(host) && !addressAllowed(host, policy)) throw new errors.SourceForbidden(`${host} is not a public address ${PRIVATE_HINT}`)
  return url
}

/** Compared on the parsed URL, so https://example.com@evil.test/ and https://example.com.evil.test/ do not match https://example.com/. */
export function matchesPrefix (url: URL, prefix: URL): boolean {
  if (url.protocol !== prefix.protocol || url.hostname !== prefix.hostname || url.port !== prefix.port) return false
  const base = prefix.pathname
  return base.endsWith('/') ? url.pathname.startsWith(base) : url.pathname === base || url.pathname.startsWith(`${base}/`)
}

/** A path with a percent-encoded "/" or "\\", or a segment that decodes to "." or "..". */
function hidesPathSegments (pathname: string): boolean {
  if (/%(2f|5c)/i.test(pathname)) return true
  return pathname.split('/').some(segment => /^(%2e|\.){1,2}$/i.test(segment))
}

export function parseAllowedSources (entries: readonly string[]): URL[] {
  return entries.map(entry => {
    const url = URL.parse(entry)
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
      throw new Error(`ALLOWED_SOURCES entry "${entry}" is not an http(s) URL prefix`)
    }
    return url
  })
}
