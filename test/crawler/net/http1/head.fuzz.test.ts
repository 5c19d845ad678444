// parseResponseHead (src/crawler/net/http1/head.ts) against llhttp, Node's HTTP parser in its strict
// mode, driven as Node's http client drives it (test/support/llhttp-reference.cjs, one `node`
// process for the whole batch): seeded response heads, valid and mutated, must be accepted or
// refused alike and, where both accept, read alike (status, reason, fields, framing and length,
// keep-alive). RFC 9112 leaves a client room: where genapi reads a head another way on purpose, the
// difference is listed in DIFFERENCES with its reason, and its cases are compared with what llhttp
// makes of the head written the way genapi reads it (bare LFs as CRLF, folds as a space...).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Framing, headEnd, parseResponseHead, type ResponseHead } from "../../../../src/crawler/net/http1/head.ts";

const SEED = Number(process.env.HEAD_FUZZ_SEED ?? 20261127);
const CASES = 6_000;
/** Body bytes the reference offers to find a Content-Length (llhttp-reference.cjs). */
const PROBE = 1 << 20;
const REFERENCE = join(import.meta.dir, "../../../support/llhttp-reference.cjs");

interface Field {
  name: string;
  value: string;
  /** Line end: CRLF, or a bare LF. */
  eol: "\r\n" | "\n";
  /** obs-fold: continuation lines (each starts with SP or HTAB) after the value. */
  folds: string[];
}

interface Case {
  statusLine: string;
  statusEol: "\r\n" | "\n";
  fields: Field[];
  isHead: boolean;
}

/** What llhttp makes of a head: its error code, or its reading. */
type Reading =
  | { error: string }
  | {
      status: number;
      reason: string;
      headers: [string, string][];
      keepAlive: boolean;
      framing: "interim" | "none" | "length" | "chunked" | "close" | "length-beyond-probe" | "unknown";
      length?: number;
    };

/** genapi's reading in the reference's terms. */
interface Compared {
  error?: string;
  status?: number;
  reason?: string;
  headers?: [string, string][];
  keepAlive?: boolean;
  framing?: string;
  length?: number;
}

// ---------------------------------------------------------------------------------------------
// Generation

function rng(seed: number) {
  let state = seed >>> 0;
  const next = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[next(items.length)]! };
}

const STATUSES = [
  "200",
  "200",
  "200",
  "201",
  "206",
  "301",
  "302",
  "404",
  "500",
  "204",
  "304",
  "205",
  "100",
  "103",
  "199",
  "101",
  "599",
  "600",
  "099",
  "000",
];
const REASONS = [" OK", " OK", " Not Found", "", " ", " with  spaces", " tab\there", " latin-1 \xe9", " a\0b", " a\rb", " a\x01b"];
const VERSIONS = ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/1.", "HTTP/11"];
const BROKEN_STATUS = [
  "HTTP/1.1  200 OK",
  "HTTP/1.1 20 OK",
  "HTTP/1.1 2000 OK",
  "HTTP/1.1 2x0 OK",
  "HTTP/1.1 200OK",
  " HTTP/1.1 200 OK",
  "HTTP/1.1\t200 OK",
  "ICY 200 OK",
  "",
];

const LENGTHS = [
  "0",
  "0",
  "5",
  "17",
  "4095",
  "4096",
  "100000",
  "05",
  " 5 ",
  "5, 5",
  "5,5",
  "5, 6",
  "-1",
  "+5",
  "0x10",
  "5.0",
  "",
  "1e3",
  "999999999999999",
  "9999999999999999",
];
const TRANSFERS = [
  "chunked",
  "chunked",
  "Chunked",
  "identity",
  "gzip",
  "gzip, chunked",
  "chunked, gzip",
  "chunked, chunked",
  "identity, chunked",
  ", chunked",
  "chunked;q=1",
  "chunked ",
  "x",
];
const CONNECTIONS = [
  "close",
  "keep-alive",
  "Keep-Alive",
  "CLOSE",
  "upgrade",
  "keep-alive, close",
  "close, keep-alive",
  "foo, keep-alive",
  "closed",
  "",
];
const VALUES = [
  "text/html",
  "",
  "a  b",
  "a\tb",
  "  padded  ",
  "\xe9\xff",
  "a\x01b",
  "a\x7fb",
  "a\0b",
  "a\rb",
  "x".repeat(9000),
  '"quoted, with comma"',
];
const NAMES = [
  "Content-Type",
  "X-A",
  "Set-Cookie",
  "Set-Cookie",
  "Content-Encoding",
  "Server",
  "x-lower",
  "X_Under",
  "X A",
  "X-A ",
  "",
  "X:Y",
  "\xe9",
  "X\x01",
];

function generate(next: (n: number) => number, pick: <T>(items: readonly T[]) => T): Case {
  const mutate = next(4) === 0;
  let statusLine = `${pick(mutate ? VERSIONS : VERSIONS.slice(0, 5))} ${pick(STATUSES)}${pick(mutate ? REASONS : REASONS.slice(0, 8))}`;
  if (mutate && next(8) === 0) statusLine = pick(BROKEN_STATUS);
  const fields: Field[] = [];
  const count = next(7);
  const field = (name: string, value: string): Field => ({
    name,
    value,
    eol: mutate && next(10) === 0 ? "\n" : "\r\n",
    folds: mutate && next(12) === 0 ? [`${pick([" ", "\t", "  "])}${pick(["more", "5", "chunked", "", "x y"])}`] : [],
  });
  for (let i = 0; i < count; i++) {
    switch (next(8)) {
      case 0:
      case 1:
        fields.push(field("Content-Length", pick(mutate ? LENGTHS : LENGTHS.slice(0, 7))));
        break;
      case 2:
        fields.push(field(pick(["Transfer-Encoding", "transfer-encoding"]), pick(mutate ? TRANSFERS : TRANSFERS.slice(0, 4))));
        break;
      case 3:
        fields.push(field("Connection", pick(CONNECTIONS)));
        break;
      default:
        fields.push(field(pick(mutate ? NAMES : NAMES.slice(0, 7)), pick(mutate ? VALUES : VALUES.slice(0, 6))));
    }
  }
  return { statusLine, statusEol: mutate && next(10) === 0 ? "\n" : "\r\n", fields, isHead: next(10) === 0 };
}

/** The head as sent; `canonical` writes it as genapi reads it: CRLF line ends and folds as one space. */
function render(c: Case, canonical = false): string {
  let head = c.statusLine + (canonical ? "\r\n" : c.statusEol);
  for (const f of c.fields) {
    if (canonical && f.folds.length > 0) {
      // The line as sent (its name may hold a colon: "X:Y" is field X), then each fold's text after a space.
      head += `${[`${f.name}: ${f.value}`.replace(/[ \t]+$/, ""), ...f.folds.map(trim)].join(" ")}\r\n`;
      continue;
    }
    head += `${f.name}: ${f.value}`;
    for (const fold of f.folds) head += `${canonical ? "\r\n" : f.eol}${fold}`;
    head += canonical ? "\r\n" : f.eol;
  }
  return `${head}\r\n`;
}

const trim = (s: string) => s.replace(/^[ \t]+|[ \t]+$/g, "");

// ---------------------------------------------------------------------------------------------
// Deliberate differences

/** The fields' values of `name` (case-insensitive), folds joined as genapi joins them. */
function values(c: Case, name: string): string[] {
  return c.fields.filter((f) => f.name.toLowerCase() === name).map((f) => [trim(f.value), ...f.folds.map(trim)].join(" "));
}

function status(c: Case): number {
  const match = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(c.statusLine);
  return match === null ? -1 : Number(match[1]);
}

const noBody = (c: Case) => c.isHead || status(c) === 204 || status(c) === 304;

interface Difference {
  name: string;
  why: string;
  /** The case is one of this difference's. */
  applies: (c: Case) => boolean;
  /** The head llhttp is given instead: the difference taken out (bare LFs and folds are always written as genapi reads them). */
  rewrite?: (c: Case) => Case;
  /** What genapi reads, from llhttp's reading of the rewritten head. */
  expected?: (reference: Compared, c: Case) => Compared;
  /** genapi's reading, in the terms of the rewritten head. */
  genapi?: (reading: Compared) => Compared;
}

/** A refusal that genapi makes where llhttp would read the head: genapi's code, unless llhttp refuses the head anyway. */
const refusedWith = (code: string) => (reference: Compared) => (reference.error !== undefined ? reference : { error: code });

const DIFFERENCES: Difference[] = [
  {
    name: "bare LF line ends",
    why:
      "RFC 9112 2.2: a recipient MAY recognize a single LF as a line terminator; servers that end lines in LF exist and " +
      "fetch reads them. llhttp's strict mode refuses them (HPE_CR_EXPECTED). Compared with llhttp's reading of the head with CRLFs.",
    applies: (c) => c.statusEol === "\n" || c.fields.some((f) => f.eol === "\n"),
  },
  {
    name: "obs-fold",
    why:
      "RFC 9112 5.2: a user agent that receives an obs-fold in a response MUST replace it with SP before interpreting the " +
      "value; llhttp's strict mode refuses the head. Compared with llhttp's reading of the head with each fold written as a space.",
    applies: (c) => c.fields.some((f) => f.folds.length > 0),
  },
  {
    name: "control characters in field values",
    why:
      "RFC 9110 5.5: CTLs other than NUL, CR and LF are invalid, but a recipient MAY retain them; genapi keeps what " +
      "fetch's Headers keeps (all but NUL, CR and LF), llhttp's strict mode refuses the head. Compared with llhttp's " +
      "reading of the head with each written as 'x' (in genapi's reading too).",
    applies: (c) => c.fields.some((f) => CTL.test(f.value) || f.folds.some((fold) => CTL.test(fold))),
    rewrite: (c) => ({
      ...c,
      fields: c.fields.map((f) => ({ ...f, value: f.value.replace(CTL_ALL, "x"), folds: f.folds.map((x) => x.replace(CTL_ALL, "x")) })),
    }),
    genapi: (reading) =>
      reading.headers === undefined ? reading : { ...reading, headers: reading.headers.map(([n, v]) => [n, v.replace(CTL_ALL, "x")]) },
  },
  {
    name: "Transfer-Encoding with Content-Length",
    why:
      "RFC 9112 6.3 rule 3: Transfer-Encoding overrides Content-Length, and the connection is closed after the response " +
      "(6.1: it may be an attempt at request smuggling); genapi reads it so, without the Content-Length field. llhttp's " +
      "strict mode refuses the head. Compared with llhttp's reading without the Content-Length fields.",
    applies: (c) => !noBody(c) && status(c) >= 200 && values(c, "transfer-encoding").length > 0 && values(c, "content-length").length > 0,
    rewrite: (c) => ({ ...c, fields: c.fields.filter((f) => f.name.toLowerCase() !== "content-length") }),
    expected: (reference) =>
      reference.error === undefined && reference.framing !== "interim" ? { ...reference, keepAlive: false } : reference,
  },
  {
    name: "Content-Length repeated with one value",
    why:
      "RFC 9110 8.6: a recipient MAY take a Content-Length list or repeated fields of one valid value as that value; genapi " +
      "does (the field keeps the values as sent), llhttp refuses them. Compared with llhttp's reading of one Content-Length.",
    applies: (c) => {
      if (noBody(c) || status(c) < 200 || values(c, "transfer-encoding").length > 0) return false;
      const parts = lengthParts(c);
      return parts.length > 1 && parts.every((p) => /^\d{1,15}$/.test(p) && Number(p) === Number(parts[0]));
    },
    rewrite: (c) => ({
      ...c,
      fields: [...c.fields.filter((f) => f.name.toLowerCase() !== "content-length"), plain("Content-Length", lengthParts(c)[0]!)],
    }),
    genapi: (reading) =>
      reading.headers === undefined
        ? reading
        : { ...reading, headers: reading.headers.map(([n, v]) => [n, n === "content-length" ? trim(v.split(",")[0]!) : v]) },
  },
  {
    name: "fields of an interim response",
    why:
      "A 1xx response's fields frame nothing and mean nothing to the crawler: genapi skips the section without reading " +
      "them, llhttp refuses one with a malformed field.",
    applies: (c) => status(c) >= 100 && status(c) < 200 && status(c) !== 101,
    rewrite: (c) => ({ ...c, fields: [] }),
  },
  {
    name: "framing fields of a response without content",
    why:
      "The response to HEAD, a 204 and a 304 have no content whatever their Content-Length or Transfer-Encoding say " +
      "(RFC 9112 6.3 rules 1-2), so genapi does not read those fields; llhttp refuses them when malformed or both present. " +
      "Compared without them (their values are genapi's Headers' as sent).",
    applies: (c) => noBody(c) && status(c) >= 200,
    // The response to HEAD gets "Content-Length: 0": without it llhttp, not told the request was HEAD until its
    // head is read, reports a body read until the close, and so no keep-alive.
    rewrite: (c) => ({
      ...c,
      fields: [...c.fields.filter((f) => !FRAMING_FIELDS.has(f.name.toLowerCase())), ...(c.isHead ? [plain("Content-Length", "0")] : [])],
    }),
    expected: withoutFramingFields,
    genapi: withoutFramingFields,
  },
  {
    name: "HTTP/1.0 with Transfer-Encoding",
    why:
      "RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing, and the connection is closed after " +
      "the message; genapi closes it, llhttp keeps it alive when the server says keep-alive.",
    applies: (c) => http10(c) && !noBody(c) && status(c) >= 200 && values(c, "transfer-encoding").length > 0,
    expected: (reference) => (reference.error !== undefined ? reference : { ...reference, keepAlive: false }),
  },
  {
    name: "HTTP/1.0 with Connection: close and keep-alive",
    why:
      "RFC 9112 9.3: with the close option the connection does not persist, whatever else the field says; llhttp keeps " +
      "an HTTP/1.0 connection alive when keep-alive is there too.",
    applies: (c) => http10(c) && connectionTokens(c).includes("close") && connectionTokens(c).includes("keep-alive"),
    expected: (reference) =>
      reference.error !== undefined || reference.framing === "interim" ? reference : { ...reference, keepAlive: false },
  },
  {
    name: "205 with content",
    why:
      "RFC 9110 15.3.6: a 205 has no content. genapi reads none and closes the connection (one that comes anyway could " +
      "be taken for the next response) unless it says Content-Length: 0 (a 205 to HEAD says nothing of it: closed too); " +
      "llhttp reads the body its framing declares.",
    applies: (c) => status(c) === 205,
    expected: (reference, c) =>
      reference.error !== undefined || (reference.framing === "none" && !c.isHead)
        ? reference
        : { ...reference, framing: "none", length: 0, keepAlive: false },
  },
  {
    name: "HTTP version other than 1.0 and 1.1",
    why: "The crawler asks in HTTP/1.1; genapi refuses a status line of another version, llhttp reads HTTP/2.0 (for one) as 1.1.",
    applies: (c) => /^HTTP\/\d\.\d /.test(c.statusLine) && !/^HTTP\/1\.[01] /.test(c.statusLine),
    expected: () => ({ error: "ERR_HTTP_MALFORMED" }),
  },
  {
    name: "Content-Length of 16 digits or more",
    why: "genapi reads at most 15 digits (999 TB: every length is exact as a number); llhttp reads up to 2^64 - 1.",
    applies: (c) =>
      !noBody(c) && status(c) >= 200 && values(c, "transfer-encoding").length === 0 && lengthParts(c).some((p) => /^\d{16,}$/.test(p)),
    expected: refusedWith("ERR_HTTP_MALFORMED"),
  },
  {
    name: "Transfer-Encoding other than chunked alone",
    why:
      "genapi decodes no transfer coding but chunked (applied once, RFC 9112 7: a sender MUST NOT apply it more than once), " +
      "and refuses a response framed by another, or with chunked not last ('chunked, identity'), rather than hand over a " +
      "body it cannot read; llhttp reads such a body until the connection closes, or as chunked when chunked is last.",
    applies: (c) => {
      if (noBody(c) || status(c) < 200) return false;
      const listed = values(c, "transfer-encoding")
        .join(", ")
        .toLowerCase()
        .split(",")
        .map(trim)
        .filter((x) => x !== "");
      const codings = listed.filter((x) => x !== "identity");
      return codings.length > 0 && !(codings.length === 1 && codings[0] === "chunked" && listed[listed.length - 1] === "chunked");
    },
    expected: refusedWith("ERR_HTTP_UNSUPPORTED_ENCODING"),
  },
  {
    name: "status outside 100-599, or 101",
    why:
      "RFC 9110 15: a status code is 100-599; genapi refuses others, llhttp reads any three digits. A 101 answers an Upgrade " +
      "the crawler never asks for: genapi refuses it, llhttp reads it as an interim response.",
    applies: (c) => {
      const s = status(c);
      return s >= 0 && (s < 100 || s > 599 || s === 101);
    },
    expected: () => ({ error: "ERR_HTTP_MALFORMED" }),
  },
];

const FRAMING_FIELDS = new Set(["content-length", "transfer-encoding"]);

function withoutFramingFields(reading: Compared): Compared {
  return reading.headers === undefined ? reading : { ...reading, headers: reading.headers.filter(([n]) => !FRAMING_FIELDS.has(n)) };
}
const http10 = (c: Case) => c.statusLine.startsWith("HTTP/1.0 ");

function connectionTokens(c: Case): string[] {
  return values(c, "connection").join(",").toLowerCase().split(",").map(trim);
}

function lengthParts(c: Case): string[] {
  return values(c, "content-length").flatMap((v) => v.split(",").map(trim));
}

/** Control characters Headers keeps and llhttp refuses (HTAB is valid in a value). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the control characters the difference is about
const CTL = /[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same, to replace them all
const CTL_ALL = /[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

function plain(name: string, value: string): Field {
  return { name, value, eol: "\r\n", folds: [] };
}

// ---------------------------------------------------------------------------------------------
// Readings

const FRAMINGS: Record<Framing, string> = {
  [Framing.None]: "none",
  [Framing.Length]: "length",
  [Framing.Chunked]: "chunked",
  [Framing.Close]: "close",
};

function genapiReading(head: string, isHead: boolean): Compared {
  const bytes = Buffer.from(head, "latin1");
  const end = headEnd(bytes, 0);
  if (end !== bytes.byteLength) throw new Error(`generated head ends at ${end} of ${bytes.byteLength}: ${JSON.stringify(head)}`);
  return compared(parseResponseHead(bytes, 0, end, isHead));
}

function compared(head: ResponseHead): Compared {
  if (head.kind === "error") return { error: head.error.code };
  if (head.kind === "interim") return { status: head.status, framing: "interim" };
  // An empty body has no framing to read (llhttp ends the message with its head); a length past
  // what the reference probes is compared as that.
  const length = head.framing === Framing.Length ? head.length : 0;
  return {
    status: head.status,
    reason: head.reason,
    headers: [...head.headers],
    keepAlive: head.keepAlive,
    framing: head.framing === Framing.Length && length === 0 ? "none" : length > PROBE ? "length-beyond-probe" : FRAMINGS[head.framing],
    length: length > PROBE ? 0 : length,
  };
}

function referenceReading(reading: Reading): Compared {
  if ("error" in reading) return { error: "refused" };
  if (reading.framing === "interim") return { status: reading.status, framing: "interim" };
  const headers = new Headers();
  for (const [name, value] of reading.headers) headers.append(name, value);
  return {
    status: reading.status,
    reason: reading.reason,
    headers: [...headers],
    keepAlive: reading.keepAlive,
    framing: reading.framing,
    length: reading.framing === "length" ? reading.length! : 0,
  };
}

/** llhttp's readings of `heads`, in one node process. */
function llhttp(heads: { head: string; isHead: boolean }[]): Reading[] {
  const input = JSON.stringify(heads.map((h) => ({ head: Buffer.from(h.head, "latin1").toString("base64"), isHead: h.isHead })));
  const run = Bun.spawnSync(["node", REFERENCE], { stdin: Buffer.from(input), stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`node ${REFERENCE} exited with ${run.exitCode}: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as Reading[];
}

/** A refusal compares as one whatever its code: llhttp's codes are not genapi's. */
function asOutcome(reading: Compared): Compared {
  return reading.error !== undefined ? { error: "refused" } : reading;
}

// ---------------------------------------------------------------------------------------------

describe("parseResponseHead reads response heads as llhttp does, but for the listed differences", () => {
  test(`${CASES} seeded heads, valid and mutated (seed ${SEED}; HEAD_FUZZ_SEED=n for another)`, () => {
    const { next, pick } = rng(SEED);
    const cases: Case[] = [];
    for (let i = 0; i < CASES; i++) cases.push(generate(next, pick));

    // llhttp reads each head written as genapi reads it (CRLFs, folds as spaces), each applying difference taken out.
    const applying = cases.map((c) => DIFFERENCES.filter((d) => d.applies(c)));
    const rewritten = cases.map((c, i) => applying[i]!.reduce((head, d) => (d.rewrite === undefined ? head : d.rewrite(head)), c));
    const readings = llhttp(rewritten.map((c) => ({ head: render(c, true), isHead: c.isHead })));
    expect(readings).toHaveLength(CASES);

    const counts = new Map<string, number>(DIFFERENCES.map((d) => [d.name, 0]));
    let accepted = 0;
    let refused = 0;
    const mismatches: unknown[] = [];
    cases.forEach((c, i) => {
      const head = render(c);
      let genapi = genapiReading(head, c.isHead);
      if (genapi.error === undefined) accepted++;
      else refused++;
      let expected = referenceReading(readings[i]!);
      for (const d of applying[i]!) {
        counts.set(d.name, counts.get(d.name)! + 1);
        if (d.expected !== undefined) expected = d.expected(expected, c);
        if (d.genapi !== undefined) genapi = d.genapi(genapi);
      }
      // A refusal is compared by its code where a difference names one.
      const named = expected.error !== undefined && expected.error !== "refused";
      const got = named ? genapi : asOutcome(genapi);
      if (!Bun.deepEquals(got, named ? expected : asOutcome(expected)))
        mismatches.push({
          seed: SEED,
          case: i,
          head,
          isHead: c.isHead,
          genapi,
          expected,
          llhttp: readings[i],
          differences: applying[i]!.map((d) => d.name),
        });
    });
    if (mismatches.length > 0)
      console.error(
        `seed ${SEED}: ${mismatches.length} mismatches; the first:`,
        JSON.stringify(mismatches.slice(0, Number(process.env.HEAD_FUZZ_SHOW ?? 3)), null, 1),
      );
    expect({ seed: SEED, mismatches: mismatches.length, first: mismatches[0] }).toEqual({ seed: SEED, mismatches: 0, first: undefined });
    // The batch holds accepted and refused heads, and each difference's cases.
    expect(accepted).toBeGreaterThan(CASES / 4);
    expect(refused).toBeGreaterThan(CASES / 10);
    for (const [name, n] of counts) expect({ name, exercised: n > 0 }).toEqual({ name, exercised: true });
  });

  test("each listed difference, on one head", () => {
    const examples: [string, string, Compared][] = [
      ["bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 3\n\n", { framing: "length", length: 3 }],
      [
        "obs-fold",
        "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n",
        {
          headers: [
            ["content-length", "0"],
            ["x-a", "a b"],
          ],
        },
      ],
      ["status outside 100-599, or 101", "HTTP/1.1 600 X\r\n\r\n", { error: "ERR_HTTP_MALFORMED" }],
      ["status outside 100-599, or 101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", { error: "ERR_HTTP_MALFORMED" }],
      [
        "Transfer-Encoding other than chunked alone",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        { error: "ERR_HTTP_UNSUPPORTED_ENCODING" },
      ],
      [
        "Transfer-Encoding other than chunked alone",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
        { error: "ERR_HTTP_UNSUPPORTED_ENCODING" },
      ],
      [
        "Transfer-Encoding with Content-Length",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        { framing: "chunked", keepAlive: false, headers: [["transfer-encoding", "chunked"]] },
      ],
      [
        "Content-Length repeated with one value",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
        { framing: "length", length: 5 },
      ],
      ["Content-Length repeated with one value", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", { framing: "length", length: 5 }],
      ["205 with content", "HTTP/1.1 205 Reset Content\r\nContent-Length: 3\r\n\r\n", { framing: "none", keepAlive: false }],
      [
        "control characters in field values",
        "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n",
        {
          headers: [
            ["content-length", "0"],
            ["x-a", "a\x01b"],
          ],
        },
      ],
      ["fields of an interim response", "HTTP/1.1 103 Early Hints\r\nLink </x>\r\n\r\n", { status: 103, framing: "interim" }],
      [
        "framing fields of a response without content",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        { framing: "none", keepAlive: true },
      ],
      [
        "HTTP/1.0 with Transfer-Encoding",
        "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n",
        { framing: "chunked", keepAlive: false },
      ],
      [
        "HTTP/1.0 with Connection: close and keep-alive",
        "HTTP/1.0 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 0\r\n\r\n",
        { keepAlive: false },
      ],
      ["HTTP version other than 1.0 and 1.1", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", { error: "ERR_HTTP_MALFORMED" }],
      [
        "Content-Length of 16 digits or more",
        "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\n",
        { error: "ERR_HTTP_MALFORMED" },
      ],
      [
        "Transfer-Encoding other than chunked alone",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
        { error: "ERR_HTTP_UNSUPPORTED_ENCODING" },
      ],
    ];
    // Every difference has its example, and each example one of the differences.
    expect([...new Set(examples.map(([name]) => name))].sort()).toEqual(DIFFERENCES.map((d) => d.name).sort());
    const readings = llhttp(examples.map(([, head]) => ({ head, isHead: false })));
    examples.forEach(([name, head, what], i) => {
      expect(DIFFERENCES.some((d) => d.name === name)).toBe(true);
      const genapi = genapiReading(head, false);
      // genapi reads it as stated; llhttp refuses it or reads it otherwise.
      expect({ head, genapi: pickKeys(genapi, what) }).toEqual({ head, genapi: what });
      expect({ head, same: Bun.deepEquals(asOutcome(genapi), referenceReading(readings[i]!)) }).toEqual({ head, same: false });
    });
  });
});

function pickKeys(reading: Compared, like: Compared): Compared {
  return Object.fromEntries(Object.keys(like).map((k) => [k, reading[k as keyof Compared]]));
}
