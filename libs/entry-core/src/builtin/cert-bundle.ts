/** PEM material read from a `cert:` entry's files. */
export interface CertBundle {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}
