import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { jwtError } from './errors.js';
import {
  MIN_SECRET_BYTES,
  type AsymmetricAlgorithm,
  type JwtOptions,
  type SymmetricAlgorithm,
} from './schema.js';

/** The key tokens are verified with, read once when the entry bootstraps. */
export type VerifyKey =
  | { kind: 'symmetric'; algorithm: SymmetricAlgorithm; secret: Uint8Array }
  | { kind: 'asymmetric'; algorithm: AsymmetricAlgorithm; key: KeyObject };

/** The symmetric or asymmetric key of `config` (undefined for jwksUrl and skipVerify). */
export function loadKey(config: JwtOptions, configPath: string): VerifyKey | undefined {
  if (config.symmetric) {
    const { algorithm, token, tokenPath } = config.symmetric;
    const secret =
      token !== ''
        ? Buffer.from(token, 'utf8')
        : dropNewline(readKeyFile(configPath, 'symmetric.tokenPath', tokenPath));
    if (secret.length < MIN_SECRET_BYTES[algorithm])
      throw jwtError('SVC_JWT_KEY_INVALID', [
        configPath,
        'symmetric.tokenPath',
        `(${tokenPath}) holds ${secret.length} bytes; a ${algorithm} secret needs at least ${MIN_SECRET_BYTES[algorithm]} (RFC 7518 §3.2)`,
      ]);
    return { kind: 'symmetric', algorithm, secret: new Uint8Array(secret) };
  }
  if (config.asymmetric) {
    const { algorithm, publicKey, publicKeyPath } = config.asymmetric;
    const field = publicKey !== '' ? 'asymmetric.publicKey' : 'asymmetric.publicKeyPath';
    const pem =
      publicKey !== '' ? publicKey : readKeyFile(configPath, field, publicKeyPath).toString('utf8');
    return { kind: 'asymmetric', algorithm, key: publicKeyFor(algorithm, pem, configPath, field) };
  }
  return undefined;
}

function readKeyFile(configPath: string, field: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw jwtError(
      'SVC_MIDDLEWARE_FILE_UNREADABLE',
      [configPath, field, file, (err as NodeJS.ErrnoException).code ?? String(err)],
      { cause: err },
    );
  }
}

/** A secret file usually ends with a newline that is not part of the secret. */
function dropNewline(b: Buffer): Buffer {
  let end = b.length;
  if (end > 0 && b[end - 1] === 0x0a) end--;
  if (end > 0 && b[end - 1] === 0x0d) end--;
  return b.subarray(0, end);
}

const CURVE: Partial<Record<AsymmetricAlgorithm, string>> = {
  ES256: 'prime256v1',
  ES384: 'secp384r1',
  ES512: 'secp521r1',
};

/** The PEM public key, checked to be of the type `algorithm` needs. */
function publicKeyFor(
  algorithm: AsymmetricAlgorithm,
  pem: string,
  configPath: string,
  field: string,
): KeyObject {
  const invalid = (problem: string, cause?: unknown) =>
    jwtError('SVC_JWT_KEY_INVALID', [configPath, field, problem], { cause });
  // createPublicKey would derive the public key from a private one: refuse those instead.
  if (pem.includes('PRIVATE KEY'))
    throw invalid('is a private key; give the public key (openssl pkey -pubout)');
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (err) {
    throw invalid('is not a PEM public key (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE)', err);
  }
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  if (algorithm.startsWith('RS') || algorithm.startsWith('PS')) {
    if (type !== 'rsa' && !(type === 'rsa-pss' && algorithm.startsWith('PS')))
      throw invalid(`is a key of type ${type}; ${algorithm} needs an RSA key`);
    if ((details?.modulusLength ?? 0) < 2048)
      throw invalid(
        `is a ${details?.modulusLength}-bit RSA key; ${algorithm} needs 2048 bits or more`,
      );
  } else if (algorithm === 'EdDSA') {
    if (type !== 'ed25519' && type !== 'ed448')
      throw invalid(`is a key of type ${type}; EdDSA needs an Ed25519 or Ed448 key`);
  } else if (type !== 'ec' || details?.namedCurve !== CURVE[algorithm]) {
    throw invalid(
      `is a key of type ${type}${details?.namedCurve ? ` (${details.namedCurve})` : ''}; ${algorithm} needs an EC ${CURVE[algorithm]} key`,
    );
  }
  return key;
}
