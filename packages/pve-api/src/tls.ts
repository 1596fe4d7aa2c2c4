import { readFileSync } from 'node:fs';
import { checkServerIdentity as defaultCheckServerIdentity, type PeerCertificate, type TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import { PveApiError } from './errors';

/**
 * How the client verifies the servers it talks to. Verification is on by default; turning it off
 * takes an explicit `insecureSkipVerify: true`.
 *
 * - nothing set: the system's CAs and the host name (right for ACME or other public certificates);
 * - `ca` / `caFile`: the cluster CA (`/etc/pve/pve-root-ca.pem`) replaces the system CAs
 *   (spec §1 option (a)); with `fingerprints` too, the leaf certificate must also match a pin,
 *   checked in `checkServerIdentity` (which Node calls only after the chain has verified);
 * - `fingerprints` alone: pin-only (option (b)): the chain is not checked, but the peer
 *   certificate's SHA-256 fingerprint is compared on the socket right after the handshake,
 *   before a single request byte is written; a mismatch closes the socket;
 * - `insecureSkipVerify`: nothing is checked (the client reports it in {@link TransportSecurity}).
 */
export interface PveTlsOptions {
  /** PEM text of the CA to trust instead of the system CAs (e.g. the cluster's `pve-root-ca.pem`). */
  ca?: string | Buffer;
  /** Path of a PEM CA file; read once at construction. */
  caFile?: string;
  /**
   * SHA-256 fingerprints of the node certificates to accept (any node's; one per node of a
   * failover list). Hex, case-insensitive, with or without `:` separators — the form of
   * `/nodes/{node}/certificates/info` or `openssl x509 -fingerprint -sha256`.
   */
  fingerprints?: readonly string[];
  /**
   * Check that the certificate names the host connected to (default `true`). Set `false` when you
   * connect by an address that is not in the certificate's SAN list; only allowed with `ca`/`caFile`
   * (pin-only mode does not check names: the pin identifies the exact certificate).
   */
  checkHostname?: boolean;
  /** Accept any certificate. Insecure; reported by {@link TransportSecurity.insecure}. */
  insecureSkipVerify?: boolean;
}

/**
 * What the transport verifies, for the daemon to log at start (loudly when `insecure`).
 * `mode`: `system-ca`, `ca`, `ca+pin`, `pin`, `none` (TLS without verification);
 * `plainHttp`: at least one base URL is `http:` (allowed only with `allowPlainHttp`).
 */
export interface TransportSecurity {
  /** Verification mode of `https:` URLs. */
  mode: 'system-ca' | 'ca' | 'ca+pin' | 'pin' | 'none';
  /** Whether the certificate's host name is checked. */
  hostnameChecked: boolean;
  /** Whether some base URL is plain `http:`. */
  plainHttp: boolean;
  /** `true` when traffic can be read or altered by a third party (plain http or no verification). */
  insecure: boolean;
  /** One line per weakness, ready to log (empty when verified). */
  warnings: string[];
}

/**
 * Normalise a SHA-256 fingerprint to Node's `fingerprint256` form (`AB:CD:…`, upper case).
 * @throws PveApiError `bad-option` when it is not 32 hex bytes
 */
export function normaliseFingerprint(text: string): string {
  const hex = text
    .trim()
    .replace(/^sha256[:=\s]*/i, '')
    .replace(/[:\s-]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) {
    throw new PveApiError(
      'bad-option',
      `fingerprint '${text}' is not a SHA-256 fingerprint (64 hex digits, colons optional)`,
    );
  }
  return hex.match(/../g)!.join(':');
}

/** Errors produced while connecting (before any request byte is sent); the transport may retry a POST after one. */
const connectErrors = new WeakSet<object>();

/** Whether `err` (or its cause chain) failed while connecting, so no request byte was sent. */
export function failedBeforeSending(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (connectErrors.has(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function markConnectError(err: Error): Error {
  connectErrors.add(err);
  return err;
}

/** The connector options and description built from {@link PveTlsOptions}. */
export interface BuiltTls {
  connect: buildConnector.connector;
  security: Omit<TransportSecurity, 'plainHttp' | 'insecure' | 'warnings'>;
}

/**
 * Build the undici connector for the TLS options: every mode wraps the connector so that a
 * connection error is known to have happened before any byte was written.
 */
export function buildTls(options: PveTlsOptions, connectTimeoutMs: number): BuiltTls {
  let ca: string | Buffer | undefined = options.ca;
  if (options.caFile !== undefined) {
    try {
      const text = readFileSync(options.caFile, 'utf8');
      if (!text.includes('-----BEGIN CERTIFICATE-----')) {
        throw new PveApiError('bad-option', `ca file '${options.caFile}' holds no PEM certificate`);
      }
      ca = ca === undefined ? text : `${String(ca)}\n${text}`;
    } catch (err) {
      if (err instanceof PveApiError) throw err;
      throw new PveApiError(
        'bad-option',
        `ca file '${options.caFile}' cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { cause: err },
      );
    }
  }
  const pins = new Set((options.fingerprints ?? []).map(normaliseFingerprint));
  if (options.fingerprints !== undefined && pins.size === 0) {
    throw new PveApiError('bad-option', "'tls.fingerprints' is empty; give at least one fingerprint or leave it out");
  }
  const checkHostname = options.checkHostname ?? true;
  if (options.insecureSkipVerify && (ca !== undefined || pins.size > 0)) {
    throw new PveApiError(
      'bad-option',
      "'tls.insecureSkipVerify' cannot be combined with 'tls.ca', 'tls.caFile' or 'tls.fingerprints'",
    );
  }
  if (!checkHostname && ca === undefined && !options.insecureSkipVerify) {
    throw new PveApiError(
      'bad-option',
      "'tls.checkHostname: false' needs 'tls.ca' or 'tls.caFile' (pin-only mode does not check names)",
    );
  }

  const pinError = (cert: PeerCertificate | undefined): Error | undefined => {
    const seen = cert?.fingerprint256;
    if (seen && pins.has(seen.toUpperCase())) return undefined;
    const err = new PveApiError(
      'tls-pin-mismatch',
      `server certificate fingerprint '${seen ?? 'none'}' matches none of the ${pins.size} pinned fingerprint(s)`,
    );
    return err;
  };

  // Session resumption is off: every connection shows its certificate and is checked again.
  const base = { timeout: connectTimeoutMs, maxCachedSessions: 0 };
  let inner: buildConnector.connector;
  let mode: BuiltTls['security']['mode'];
  let postCheck: ((socket: TLSSocket) => Error | undefined) | undefined;
  if (options.insecureSkipVerify) {
    mode = 'none';
    inner = buildConnector({ ...base, rejectUnauthorized: false });
  } else if (ca !== undefined) {
    // (a) chain against the cluster CA; then host name (unless relaxed) and pin in checkServerIdentity
    mode = pins.size > 0 ? 'ca+pin' : 'ca';
    inner = buildConnector({
      ...base,
      ca,
      rejectUnauthorized: true,
      checkServerIdentity: (host: string, cert: PeerCertificate) => {
        if (checkHostname) {
          const err = defaultCheckServerIdentity(host, cert);
          if (err) return err;
        }
        return pins.size > 0 ? pinError(cert) : undefined;
      },
    });
  } else if (pins.size > 0) {
    // (b) pin only: the chain is self-signed, so verify the fingerprint on the socket before use
    mode = 'pin';
    inner = buildConnector({ ...base, rejectUnauthorized: false });
    postCheck = (socket) => pinError(socket.getPeerCertificate());
  } else {
    mode = 'system-ca';
    inner = buildConnector({ ...base, rejectUnauthorized: true });
  }

  const connect: buildConnector.connector = (opts, callback) => {
    inner(opts, (err, socket) => {
      if (err) {
        callback(markConnectError(err), null);
        return;
      }
      if (postCheck && opts.protocol === 'https:') {
        const bad = postCheck(socket as TLSSocket);
        if (bad) {
          socket.destroy();
          callback(markConnectError(bad), null);
          return;
        }
      }
      callback(null, socket);
    });
  };
  return {
    connect,
    security: {
      mode,
      hostnameChecked: mode === 'system-ca' || ((mode === 'ca' || mode === 'ca+pin') && checkHostname),
    },
  };
}
