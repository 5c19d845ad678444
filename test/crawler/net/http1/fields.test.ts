// FieldList (src/crawler/net/http1/fields.ts), the client's header fields in place of a Headers: each
// case is checked against Bun's own Headers given the same fields, so that the crawl reads an
// answer's fields as it read them from a Response.
import { describe, expect, test } from "bun:test";
import { FieldList } from "../../../../src/crawler/net/http1/fields.ts";

type Field = [name: string, value: string];

/** Both, made of the same fields: each holds the error its append threw, if any. */
function both(fields: Field[]): { list: FieldList; headers: Headers; listError?: string; headersError?: string } {
  const list = new FieldList();
  const headers = new Headers();
  let listError: string | undefined;
  let headersError: string | undefined;
  for (const [name, value] of fields) {
    try {
      list.append(name, value);
    } catch (err) {
      listError = (err as Error).name;
    }
    try {
      headers.append(name, value);
    } catch (err) {
      headersError = (err as Error).name;
    }
  }
  return { list, headers, listError, headersError };
}

function forEachOf(fields: { forEach(cb: (value: string, name: string) => void): void }): Field[] {
  const seen: Field[] = [];
  fields.forEach((value, name) => {
    seen.push([name, value]);
  });
  return seen;
}

const NGINX: Field[] = [
  ["Server", "nginx/1.22.1"],
  ["Date", "Fri, 27 Nov 2026 09:50:00 GMT"],
  ["Content-Type", "text/html; charset=utf-8"],
  ["Content-Length", "28000"],
  ["Last-Modified", "Fri, 27 Nov 2026 08:00:00 GMT"],
  ["Connection", "keep-alive"],
  ["ETag", '"6566-6d60"'],
  ["Accept-Ranges", "bytes"],
];

describe("FieldList reads fields as Headers does", () => {
  test("get is case-insensitive, and null for a field that is not there", () => {
    const { list, headers } = both(NGINX);
    for (const name of ["content-type", "Content-Type", "CONTENT-TYPE", "etag", "ETag", "last-modified", "location", "x-robots-tag"]) {
      expect({ name, value: list.get(name) }).toEqual({ name, value: headers.get(name) });
    }
    expect(list.get("ETAG")).toBe('"6566-6d60"');
    expect(list.get("location")).toBeNull();
    expect(list.has("Content-Length")).toBe(true);
    expect(list.has("location")).toBe(false);
  });

  test("repeated fields are one value joined with ', ', in the order received, Set-Cookie's too", () => {
    const fields: Field[] = [
      ["Link", '</a>; rel="preload"'],
      ["X-Robots-Tag", "noindex"],
      ["link", '</b>; rel="canonical"'],
      ["Set-Cookie", "a=1"],
      ["x-robots-tag", "nofollow"],
      ["set-cookie", "b=2"],
    ];
    const { list, headers } = both(fields);
    expect(list.get("link")).toBe('</a>; rel="preload", </b>; rel="canonical"');
    expect(list.get("x-robots-tag")).toBe("noindex, nofollow");
    for (const name of ["link", "x-robots-tag", "set-cookie"]) expect(list.get(name)).toBe(headers.get(name));
    expect(list.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(list.getSetCookie()).toEqual(headers.getSetCookie());
  });

  test("iteration and forEach: lower-cased names in order, repeats joined, Set-Cookie apart and last", () => {
    const fields: Field[] = [
      ["Zed", "1"],
      ["Set-Cookie", "s1"],
      ...NGINX,
      ["Content-Type", "t2"],
      ["A-Thing", "a"],
      ["set-cookie", "s2"],
      ["x-b", ""],
    ];
    const { list, headers } = both(fields);
    expect([...list]).toEqual([...headers] as Field[]);
    expect(forEachOf(list)).toEqual(forEachOf(headers));
    expect([...list.toHeaders()]).toEqual([...headers]);
  });

  test("a value's tabs, spaces, CRs and LFs at either end are stripped", () => {
    for (const value of [" a ", "\ta\t", "\r a\r", "a \r", "\n\ta", "  ", ""]) {
      const { list, headers } = both([["X", value]]);
      expect({ value, read: list.get("x") }).toEqual({ value, read: headers.get("x") });
    }
  });

  test("refuses with a TypeError what Headers refuses, accepts what it accepts", () => {
    const names = ["a b", "a\xe9", "a^", "a:", "", 'a"', "a/", "{", "a\x7f", "A~|`", "x-ok", "a\x00", "a(b)"];
    const values = ["a\rb", "a\0b", "a\nb", "a\x01b", "a\x7fb", "a\xffb", "a\u0100", "ok", "\ra\r"];
    for (const name of names) {
      const { listError, headersError } = both([[name, "v"]]);
      expect({ name, listError }).toEqual({ name, listError: headersError });
    }
    for (const value of values) {
      const { list, headers, listError, headersError } = both([["x", value]]);
      expect({ value, listError, read: list.get("x") }).toEqual({ value, listError: headersError, read: headers.get("x") });
    }
    expect(both([["a b", "v"]]).listError).toBe("TypeError");
    // A name refused once is refused again (names checked once are remembered: the refused ones are not).
    expect(both([["a b", "v"]]).listError).toBe("TypeError");
  });

  test("delete removes every field of the name, whatever its case", () => {
    const { list, headers } = both([
      ["Content-Length", "5"],
      ["Transfer-Encoding", "chunked"],
      ["content-length", "5"],
    ]);
    list.delete("CONTENT-LENGTH");
    headers.delete("content-length");
    expect(list.get("content-length")).toBeNull();
    expect([...list]).toEqual([...headers] as Field[]);
  });
});
