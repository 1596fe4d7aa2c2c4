import { X509Certificate } from 'node:crypto';
import { generate } from 'selfsigned';

/** Certificates made for a test or a simulated cluster: a CA and a server certificate it signed. */
export interface TestCertificates {
  /** PEM of the CA (what a client passes as `tls.ca`, like `/etc/pve/pve-root-ca.pem`). */
  caPem: string;
  /** PEM of the CA's private key. */
  caKeyPem: string;
  /** PEM of the server certificate (signed by the CA). */
  certPem: string;
  /** PEM of the server's private key. */
  keyPem: string;
  /** SHA-256 fingerprint of the server certificate, `AB:CD:…` (what a client pins). */
  fingerprint256: string;
}

/**
 * Generate a CA and a server certificate signed by it, offline (no network, no openssl binary),
 * with SANs like a Proxmox VE node certificate: `localhost`, `127.0.0.1`, `::1` and `hosts`.
 * EC P-256 keys, SHA-256 signatures, valid from one hour ago for `days` days.
 */
export async function generateCertificates(
  options: { hosts?: string[]; commonName?: string; days?: number } = {},
): Promise<TestCertificates> {
  const notBeforeDate = new Date(Date.now() - 3600_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + (options.days ?? 30) * 86400_000);
  const ca = await generate([{ name: 'commonName', value: 'poise test cluster CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const hosts = options.hosts ?? [];
  const altNames = [
    { type: 2 as const, value: 'localhost' },
    { type: 7 as const, ip: '127.0.0.1' },
    { type: 7 as const, ip: '::1' },
    ...hosts.map((h) => (/^[\d.]+$|:/.test(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h })),
  ];
  const leaf = await generate([{ name: 'commonName', value: options.commonName ?? 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return {
    caPem: ca.cert,
    caKeyPem: ca.private,
    certPem: leaf.cert,
    keyPem: leaf.private,
    fingerprint256: new X509Certificate(leaf.cert).fingerprint256,
  };
}
