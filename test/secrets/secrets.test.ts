// The server's secret key and what it seals: AES-256-GCM with a fresh nonce per value and the
// context (a job id) bound in; the key file read at start (refused with one line that never holds
// its content), or created beside the SQLite database on first need, mode 0600, once.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importSecretKey, open, SealedBoxError, seal } from "../../src/secrets/sealed-box.ts";
import { openSecretKeys, SecretKeyError } from "../../src/secrets/secret-key.ts";
import { tempDir } from "../support/binary.ts";

const SECRET = "Planted-S3cret-9c1e";
const rawKey = () => crypto.getRandomValues(new Uint8Array(32));

describe("sealed values", () => {
  test("open(seal(x)) is x; the sealed text holds neither the value nor a reused nonce", async () => {
    const key = await importSecretKey(rawKey());
    const a = await seal(key, SECRET, "job-1");
    const b = await seal(key, SECRET, "job-1");
    expect(a).not.toContain(SECRET);
    expect(a).not.toBe(b);
    expect(a.split(".")[1]).not.toBe(b.split(".")[1]);
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(await open(key, a, "job-1")).toBe(SECRET);
    expect(await open(key, b, "job-1")).toBe(SECRET);
  });

  test("another context (a job id), another key, or a changed byte: it does not open", async () => {
    const key = await importSecretKey(rawKey());
    const sealed = await seal(key, SECRET, "job-1");
    const refused = async (promise: Promise<unknown>) =>
      expect(
        await promise.then(
          () => null,
          (e) => e,
        ),
      ).toBeInstanceOf(SealedBoxError);
    await refused(open(key, sealed, "job-2"));
    await refused(open(await importSecretKey(rawKey()), sealed, "job-1"));
    const [version, nonce, data] = sealed.split(".");
    const flipped = `${data!.slice(0, 5)}${data![5] === "A" ? "B" : "A"}${data!.slice(6)}`;
    await refused(open(key, `${version}.${nonce}.${flipped}`, "job-1"));
    await refused(open(key, `v2.${nonce}.${data}`, "job-1"));
    await refused(open(key, "garbage", "job-1"));
  });

  test("only a 32-byte key is taken", () => {
    expect(() => importSecretKey(new Uint8Array(16))).toThrow(RangeError);
  });
});

describe("the secret key file", () => {
  const keyText = () => Buffer.from(rawKey()).toString("base64");

  test("--secret-key-file: read at start, used as it is; the same file gives the same key", async () => {
    const dir = tempDir();
    const file = join(dir, "key");
    writeFileSync(file, `${keyText()}\n`, { mode: 0o600 });
    const a = await openSecretKeys({ file, sqlitePath: null });
    const b = await openSecretKeys({ file, sqlitePath: join(dir, "genapi.db") });
    expect(a.available).toBe(true);
    const sealed = await seal((await a.key(false))!, SECRET, "j");
    expect(await open((await b.key(false))!, sealed, "j")).toBe(SECRET);
    // No default file is made when the flag names one.
    expect(existsSync(join(dir, "genapi.secret"))).toBe(false);
  });

  test("a missing, empty, short, long or non-base64 file stops the start with one line naming it, never its content", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "adir"));
    const cases: [string, string | null, RegExp][] = [
      ["missing", null, /^cannot read the secret key file .*missing: no such file$/],
      ["adir", null, /^cannot read the secret key file .*adir: /],
      ["empty", "", /must hold 32 random bytes in base64/],
      ["short", Buffer.from(rawKey().slice(0, 31)).toString("base64"), /must hold 32 random bytes/],
      ["long", Buffer.from(new Uint8Array(33)).toString("base64"), /must hold 32 random bytes/],
      ["text", `${SECRET}${SECRET}${SECRET}`, /must hold 32 random bytes/],
    ];
    for (const [name, content, message] of cases) {
      const file = join(dir, name);
      if (content !== null) writeFileSync(file, content);
      const error = await openSecretKeys({ file, sqlitePath: null }).then(
        () => null,
        (e) => e,
      );
      expect(error).toBeInstanceOf(SecretKeyError);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain("\n");
      expect(error.message).not.toContain(SECRET);
    }
  });

  test("a key file others may read works, with a warning line", async () => {
    const file = join(tempDir(), "key");
    writeFileSync(file, keyText());
    chmodSync(file, 0o644);
    const lines: string[] = [];
    await openSecretKeys({ file, sqlitePath: null, log: (m) => lines.push(m) });
    expect(lines).toEqual([`the secret key file ${file} can be read by other users (mode 644): chmod 600 it`]);
  });

  test("SQLite without the flag: genapi.secret beside the database, made on first need only, mode 0600, once", async () => {
    const dir = tempDir();
    const keys = await openSecretKeys({ file: null, sqlitePath: join(dir, "genapi.db") });
    expect(keys.available).toBe(true);
    expect(await keys.key(false)).toBeNull();
    expect(existsSync(join(dir, "genapi.secret"))).toBe(false);
    // Several at once (and another process's view of the same file) agree on one key.
    const other = await openSecretKeys({ file: null, sqlitePath: join(dir, "genapi.db") });
    const made = await Promise.all([keys.key(true), other.key(true), keys.key(true)]);
    const path = join(dir, "genapi.secret");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    expect(readdirSync(dir)).toEqual(["genapi.secret"]);
    const sealed = await seal(made[0]!, SECRET, "j");
    for (const key of made) expect(await open(key!, sealed, "j")).toBe(SECRET);
    // A later start reads it (and checks it at once).
    const later = await openSecretKeys({ file: null, sqlitePath: join(dir, "genapi.db") });
    expect(await open((await later.key(false))!, sealed, "j")).toBe(SECRET);
    writeFileSync(path, "broken");
    expect(await openSecretKeys({ file: null, sqlitePath: join(dir, "genapi.db") }).catch((e) => e)).toBeInstanceOf(SecretKeyError);
  });

  test("PostgreSQL without the flag: nothing can be sealed", async () => {
    const keys = await openSecretKeys({ file: null, sqlitePath: null });
    expect(keys.available).toBe(false);
    expect(await keys.key(true)).toBeNull();
  });
});
