// The memory ledger as the crawl state's seen set (SeenUrls): what it says is seen is what a plain
// set would say, and the referrers it counts on the way are those of src/crawler/links/model.ts.
import { expect, test } from "bun:test";
import { LinkLedger } from "../../../src/crawler/links/ledger.ts";
import type { LinkFate } from "../../../src/crawler/links/model.ts";

const FINE: LinkFate = { kind: "ok" };

const u = (path: string) => `http://site.test${path}`;

async function lists(ledger: LinkLedger) {
  return (await ledger.linked(null, 100)).map((row) => [row.url, row.referrerCount, row.referrers]);
}

test("seen as a set says; referrers counted for URLs still to answer, none once a URL answers fine", async () => {
  const ledger = new LinkLedger();
  expect(ledger.meet(u("/a"), u("/p1"))).toBe(false);
  ledger.add(u("/a"), true, u("/p1")); // queued by /p1
  ledger.add(u("/left-out"), false); // excluded
  expect([ledger.has(u("/a")), ledger.has(u("/left-out")), ledger.has(u("/b"))]).toEqual([true, true, false]);
  expect(ledger.meet(u("/a"), u("/p0"))).toBe(true);
  expect(ledger.meet(u("/a"), null)).toBe(true); // a canonical or an excluded link: not a referrer
  expect(ledger.meet(u("/left-out"), u("/p2"))).toBe(true);
  ledger.apply({ fates: [{ url: u("/a"), fate: { kind: "broken", status: 404, error: "HTTP 404" } }] }, [], undefined);
  expect(ledger.meet(u("/a"), u("/p3"))).toBe(true);
  expect(await lists(ledger)).toEqual([[u("/a"), 3, [u("/p0"), u("/p1"), u("/p3")]]]);

  ledger.add(u("/fine"), true, u("/p1"));
  ledger.apply({ fates: [{ url: u("/fine"), fate: FINE }] }, [], undefined);
  expect(ledger.meet(u("/fine"), u("/p4"))).toBe(true);
  expect(ledger.size).toBe(1); // only /a's row is left
});

test("a link dropped by a full frontier stays unseen and keeps its referrers until a later page queues it", async () => {
  const ledger = new LinkLedger();
  expect(ledger.meet(u("/d"), u("/p1"))).toBe(false);
  ledger.drop(u("/d"), u("/p1"));
  expect(ledger.has(u("/d"))).toBe(false);
  expect(ledger.meet(u("/d"), u("/p2"))).toBe(false);
  ledger.add(u("/d"), true, u("/p2"));
  expect(ledger.has(u("/d"))).toBe(true);
  ledger.add(u("/d"), true, u("/p9")); // already seen: nothing, as a set's add
  ledger.apply({ fates: [{ url: u("/d"), fate: { kind: "broken", status: 410, error: "HTTP 410" } }] }, [], undefined);
  expect(await lists(ledger)).toEqual([[u("/d"), 2, [u("/p1"), u("/p2")]]]);
});

test("a claim made void on resume is unseen again, and what the report holds of it stays", async () => {
  const ledger = new LinkLedger();
  ledger.add(u("/hop"));
  expect(ledger.meet(u("/hop"), u("/p1"))).toBe(true);
  expect(ledger.delete(u("/hop"))).toBe(true);
  expect(ledger.delete(u("/never"))).toBe(false);
  expect(ledger.has(u("/hop"))).toBe(false);
  ledger.add(u("/hop"));
  ledger.apply({ fates: [{ url: u("/hop"), fate: { kind: "broken", status: 500, error: "HTTP 500" } }] }, [], undefined);
  expect(await lists(ledger)).toEqual([[u("/hop"), 1, [u("/p1")]]]);
});

test("a nofollow link counts, unless its URL is known fine or left out", async () => {
  const ledger = new LinkLedger();
  ledger.add(u("/left-out"), false);
  const page = { from: u("/p1"), nofollow: [u("/n"), u("/left-out")] };
  ledger.apply({ fates: [], page }, [], undefined);
  expect(ledger.has(u("/n"))).toBe(false); // met, not seen: a followed link may still queue it
  ledger.add(u("/n"), true, u("/p2"));
  ledger.apply({ fates: [{ url: u("/n"), fate: { kind: "broken", status: 404, error: "HTTP 404" } }] }, [], undefined);
  const [row] = await ledger.linked(null, 10);
  expect([row!.url, row!.referrerCount, row!.referrers, row!.followed]).toEqual([u("/n"), 2, [u("/p1"), u("/p2")], true]);
  expect(await ledger.linked(u("/n"), 10)).toEqual([]);
});
