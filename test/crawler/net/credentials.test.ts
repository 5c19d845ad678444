// The credentials sender alone: what it adds, for which origin, and what it strips from every other.
import { describe, expect, test } from "bun:test";
import { withCredentials } from "../../../src/crawler/net/credentials.ts";

const SECRET = "s3cr3t-Value-42";
const auth = {
  basic: { username: "preview", password: SECRET },
  headers: { "X-Preview-Token": SECRET },
  cookies: { session: SECRET, theme: "dark" },
};

/** Sends one request through the wrapper; returns the headers the client was given. */
async function sent(origin: string, input: string, headers: Record<string, string>) {
  let seen: Record<string, string> = {};
  const send = withCredentials(
    async (_input, init) => {
      seen = init.headers as Record<string, string>;
      return new Response("ok");
    },
    { auth, origin },
  );
  await send(input, { headers });
  return seen;
}

const ENGINE = { "User-Agent": "genapi/0.1.0", Accept: "text/html" };

describe("withCredentials", () => {
  test("the start origin gets Authorization, the headers and one Cookie header", async () => {
    const headers = await sent("https://staging.example.com", "https://203.0.113.7/page", { ...ENGINE, Host: "staging.example.com" });
    expect(headers).toEqual({
      ...ENGINE,
      Host: "staging.example.com",
      "X-Preview-Token": SECRET,
      Authorization: `Basic ${Buffer.from(`preview:${SECRET}`).toString("base64")}`,
      Cookie: `session=${SECRET}; theme=dark`,
    });
  });

  test("the origin is scheme, host name and port: a default port written or not is the same, any other difference is not", async () => {
    const same = [
      ["http://127.0.0.1:8080", "http://127.0.0.1:8080/x", "127.0.0.1:8080"],
      ["https://example.com", "https://203.0.113.7/x", "example.com"],
      ["https://example.com", "https://203.0.113.7:443/x", "example.com:443"],
      ["http://example.com", "http://203.0.113.7/x", "EXAMPLE.com"],
      ["http://[::1]:8080", "http://[::1]:8080/x", "[::1]:8080"],
    ];
    for (const [origin, input, host] of same) expect((await sent(origin!, input!, { Host: host! })).Authorization).toBeDefined();
    const other = [
      ["https://example.com", "http://203.0.113.7/x", "example.com"], // scheme
      ["http://example.com", "https://203.0.113.7/x", "example.com"],
      ["http://127.0.0.1:8080", "http://127.0.0.1:8081/x", "127.0.0.1:8081"], // port
      ["http://127.0.0.1:8080", "http://127.0.0.1:8080/x", "localhost:8080"], // name, same address
      ["https://example.com", "https://203.0.113.7/x", "www.example.com"],
      ["https://example.com", "https://203.0.113.7/x", "example.com.evil.test"],
      ["https://example.com", "https://203.0.113.7/x", "example.com."],
    ];
    for (const [origin, input, host] of other)
      expect(await sent(origin!, input!, { ...ENGINE, Host: host! })).toEqual({ ...ENGINE, Host: host! });
  });

  test("credential headers the caller set are removed for every other origin, and replaced for the start origin", async () => {
    const smuggled = {
      ...ENGINE,
      authorization: "Bearer caller",
      COOKIE: "a=b",
      "Proxy-Authorization": "Basic x",
      "x-preview-token": SECRET,
      "X-Other": "caller's own",
      Host: "other.example",
    };
    expect(await sent("https://example.com", "https://203.0.113.7/", smuggled)).toEqual({
      ...ENGINE,
      "X-Other": "caller's own",
      Host: "other.example",
    });
    const own = await sent("https://example.com", "https://203.0.113.7/", { ...smuggled, Host: "example.com" });
    expect(own).toEqual({
      ...ENGINE,
      "X-Other": "caller's own",
      Host: "example.com",
      "X-Preview-Token": SECRET,
      Authorization: `Basic ${Buffer.from(`preview:${SECRET}`).toString("base64")}`,
      Cookie: `session=${SECRET}; theme=dark`,
    });
  });

  test("a header the user set replaces the crawler's own of that name, whatever its case", async () => {
    let seen: Record<string, string> = {};
    const send = withCredentials(
      async (_input, init) => {
        seen = init.headers as Record<string, string>;
        return new Response("ok");
      },
      { auth: { headers: { "user-agent": "Staging-Bot" } }, origin: "http://example.com" },
    );
    await send("http://203.0.113.7/", { headers: { ...ENGINE, Host: "example.com" } });
    expect(seen).toEqual({ Accept: "text/html", Host: "example.com", "user-agent": "Staging-Bot" });
    // Elsewhere the crawler's own stays: it is no credential.
    await send("http://203.0.113.7/", { headers: { ...ENGINE, Host: "elsewhere.example" } });
    expect(seen).toEqual({ ...ENGINE, Host: "elsewhere.example" });
  });

  test("the caller's headers object is never changed", async () => {
    const headers = { ...ENGINE, Host: "example.com" };
    await sent("http://example.com", "http://203.0.113.7/", headers);
    expect(headers).toEqual({ ...ENGINE, Host: "example.com" });
  });
});
