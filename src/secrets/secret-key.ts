// The server's secret key, which seals what must be stored but never shown (a job's credentials):
// 32 random bytes in base64 in a file. `--secret-key-file PATH` names it, and is read at start: a
// missing or malformed file stops serve. Without it, SQLite keeps `genapi.secret` beside the
// database, created (mode 0600) the first time a key is needed, which is when a job with
// credentials is created. On PostgreSQL, instances on other machines must share the key, so there
// is none without the flag: credentials cannot be kept there, and the jobs that need them are refused.
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { importSecretKey } from "./sealed-box.ts";

/** The file SQLite keeps beside its database when no --secret-key-file is given. */
export const DEFAULT_SECRET_KEY_FILE = "genapi.secret";

/** The key file cannot be read, written or used; the message is one line naming it, never its content. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretKeyError";
  }
}

export interface SecretKeys {
  /** False when nothing can be sealed on this server: PostgreSQL without --secret-key-file. */
  readonly available: boolean;
  /** The key; `create`: make the default file when it is missing. Null when there is none (yet). */
  key(create: boolean): Promise<CryptoKey | null>;
}

export interface SecretKeyOptions {
  /** --secret-key-file, or null. */
  file: string | null;
  /** Where the default file goes: beside this SQLite database; null for PostgreSQL (no default). */
  sqlitePath: string | null;
  /** One line for an operator (a key file others may read). */
  log?: (message: string) => void;
}

/**
 * The server's keys, checked at start: a given file must be there and well formed, and so must the
 * default file if it already exists. Throws SecretKeyError.
 */
export async function openSecretKeys(options: SecretKeyOptions): Promise<SecretKeys> {
  if (options.file !== null) {
    const key = await readKeyFile(options.file, options.log);
    return { available: true, key: async () => key };
  }
  if (options.sqlitePath === null || options.sqlitePath === ":memory:") return { available: false, key: async () => null };
  const path = join(dirname(options.sqlitePath), DEFAULT_SECRET_KEY_FILE);
  let loaded: CryptoKey | null = exists(path) ? await readKeyFile(path, options.log) : null;
  return {
    available: true,
    async key(create) {
      if (loaded) return loaded;
      if (!exists(path)) {
        if (!create) return null;
        createKeyFile(path);
      }
      loaded = await readKeyFile(path, options.log);
      return loaded;
    },
  };
}

const KEY_TEXT = /^[A-Za-z0-9+/_-]{43}=?$/;

async function readKeyFile(path: string, log?: (message: string) => void): Promise<CryptoKey> {
  let text: string;
  let mode: number;
  try {
    mode = statSync(path).mode;
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "a directory" : code;
    throw new SecretKeyError(`cannot read the secret key file ${path}: ${reason ?? "unreadable"}`);
  }
  const raw = KEY_TEXT.test(text) ? Buffer.from(text, "base64") : null;
  if (raw === null || raw.byteLength !== 32) {
    throw new SecretKeyError(`the secret key file ${path} must hold 32 random bytes in base64 (openssl rand -base64 32 > ${path})`);
  }
  if ((mode & 0o077) !== 0)
    log?.(`the secret key file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 it`);
  return importSecretKey(raw);
}

function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    // A parent that is not a directory (ENOTDIR): there is no key there; opening the database
    // beside it says what is wrong with the path.
    return false;
  }
}

/**
 * Writes a new key to `path`, mode 0600, whole or not at all: written to a file of its own, then
 * linked into place, which fails if another process got there first (its key is then the one).
 */
function createKeyFile(path: string): void {
  const temp = `${path}.${process.pid}.${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex")}.tmp`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeSync(fd, `${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, path);
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
    }
  } catch (error) {
    throw new SecretKeyError(`cannot create the secret key file ${path}: ${(error as { code?: string }).code ?? (error as Error).message}`);
  } finally {
    try {
      unlinkSync(temp);
    } catch {}
  }
}
