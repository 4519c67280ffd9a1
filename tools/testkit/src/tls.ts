import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Writes a self-signed certificate for `localhost` (RSA 2048, one day, SAN DNS:localhost) and its
 * key into `dir` with openssl; returns the two files' paths.
 */
export function writeSelfSignedCert(dir: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}
