// Passkeys: the server's WebAuthn options (JSON, binary fields as
// base64url) to the browser's ArrayBuffers and back.

function fromB64url(s: string): ArrayBuffer {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out.buffer;
}

function toB64url(buf: ArrayBuffer | null | undefined): string | undefined {
  if (!buf) return undefined;
  const bytes = new Uint8Array(buf);
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** passkeysSupported reports whether this browser can use passkeys here. */
export function passkeysSupported(): boolean {
  return typeof window.PublicKeyCredential === 'function' && window.isSecureContext;
}

/** createPasskey runs the registration ceremony for the server's options. */
export async function createPasskey(options: any): Promise<unknown> {
  const pk = { ...options.publicKey };
  pk.challenge = fromB64url(pk.challenge);
  pk.user = { ...pk.user, id: fromB64url(pk.user.id) };
  pk.excludeCredentials = (pk.excludeCredentials ?? []).map((c: any) => ({ ...c, id: fromB64url(c.id) }));
  const cred = (await navigator.credentials.create({ publicKey: pk })) as PublicKeyCredential | null;
  if (!cred) throw new Error('No passkey was created.');
  const r = cred.response as AuthenticatorAttestationResponse;
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      attestationObject: toB64url(r.attestationObject),
      transports: typeof r.getTransports === 'function' ? r.getTransports() : undefined,
    },
  };
}

/** getPasskey runs the assertion ceremony for the server's options. */
export async function getPasskey(options: any): Promise<unknown> {
  const pk = { ...options.publicKey };
  pk.challenge = fromB64url(pk.challenge);
  pk.allowCredentials = (pk.allowCredentials ?? []).map((c: any) => ({ ...c, id: fromB64url(c.id) }));
  const cred = (await navigator.credentials.get({ publicKey: pk })) as PublicKeyCredential | null;
  if (!cred) throw new Error('No passkey was used.');
  const r = cred.response as AuthenticatorAssertionResponse;
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      authenticatorData: toB64url(r.authenticatorData),
      signature: toB64url(r.signature),
      userHandle: toB64url(r.userHandle),
    },
  };
}
