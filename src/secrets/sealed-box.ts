// Values kept encrypted at rest: AES-256-GCM through Bun's built-in Web Crypto, a fresh random
// 96-bit nonce for every value sealed, and the caller's context (a job id) as additional data, so a
// sealed value moved to another context does not open. The sealed form is text for a TEXT column:
// `v1.<nonce>.<ciphertext and tag>`, both base64url.

const VERSION = "v1";
const NONCE_BYTES = 12;

/** A sealed value that does not open: another key, another context, or changed bytes. */
export class SealedBoxError extends Error {
  constructor(message = "the value cannot be decrypted with this key and context") {
    super(message);
    this.name = "SealedBoxError";
  }
}

/** An AES-256-GCM key from 32 raw bytes; not extractable. */
export function importSecretKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.byteLength !== 32) throw new RangeError("an AES-256 key is 32 bytes");
  return crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
}

export async function seal(key: CryptoKey, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(context), tagLength: 128 },
    key,
    new TextEncoder().encode(plaintext),
  );
  return `${VERSION}.${Buffer.from(iv).toString("base64url")}.${Buffer.from(sealed).toString("base64url")}`;
}

/** The plaintext of `sealed` under `key` and `context`; SealedBoxError when it does not open. */
export async function open(key: CryptoKey, sealed: string, context: string): Promise<string> {
  const [version, iv, data, ...rest] = sealed.split(".");
  if (version !== VERSION || iv === undefined || data === undefined || rest.length > 0) throw new SealedBoxError("not a sealed value");
  const nonce = Buffer.from(iv, "base64url");
  if (nonce.byteLength !== NONCE_BYTES) throw new SealedBoxError("not a sealed value");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: nonce, additionalData: new TextEncoder().encode(context), tagLength: 128 },
      key,
      Buffer.from(data, "base64url"),
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new SealedBoxError();
  }
}
