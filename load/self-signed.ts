// A self-signed certificate for 127.0.0.1, made by openssl, for a loopback HTTPS origin (the main-thread
// bench's --https, test/sources/tls-fetch.test.ts). Most real origins are HTTPS.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Its key and certificate, written into `dir` (the caller's to remove) and read back. */
export function selfSignedCertificate (dir: string): { key: Buffer, cert: Buffer, certPath: string } {
  const [keyPath, certPath] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' })
  return { key: readFileSync(keyPath), cert: readFileSync(certPath), certPath }
}
