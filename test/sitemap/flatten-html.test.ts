import { describe, expect, test } from "bun:test";
import { flattenHtml } from "../../src/sitemap/flatten-html.ts";
import { extractPage } from "../../src/sitemap/links.ts";

const extract = (html: string) => extractPage(html, "http://site.test/dir/page", "genapi", 10_000, { alternates: true, images: true });

describe("flattenHtml", () => {
  test("keeps what extraction reads and what makes text of markup; drops every other tag", () => {
    expect(flattenHtml(`<div class="x"><p>Hi <b>there</b></p><A HREF="/a">a</A><img src="/i.png"><br/></div>`)).toBe(
      `Hi there</a><a HREF="/a">a</A><img src="/i.png">`,
    );
    // Tag-like text in scripts, comments and titles goes too: it is text there either way.
    expect(flattenHtml(`<script><div></script><!-- <div> --><!doctype html><title><b></title>`)).toBe(
      `<script></script><!--  --><!doctype html><title></title>`,
    );
  });

  test("extraction reads the same from a page and from its flattened form", () => {
    const pages = [
      `<html><head><base href="/base/"><link rel="canonical" href="/canon"><meta name="robots" content="nofollow"></head><body><a href="x">x</a></body></html>`,
      `<head><link rel="alternate" hreflang="de" href="/de/"><meta name="genapi" content="noindex"></head><div><a href="/1"><span>1</span></a><area href="/2"><img src="/pic.png"></div>`,
      `<noscript><a href="/ns"></noscript><table><tr><td><a href="/t" rel="nofollow">t</a><a href="/u">u</a></td></tr></table>`,
      `<script>document.write('<a href="/s">')</script><textarea><a href="/ta"></textarea><!-- <a href="/c"> --><a href="/after">`,
    ];
    for (const html of pages) expect(extract(flattenHtml(html))).toEqual(extract(html));
  });

  test("a page of a million unclosed tags becomes flat: nested a, b and noscript tags alike", () => {
    for (const tag of ["<b>", "<div><span>", "<noscript>"]) {
      expect(flattenHtml(`<a href="/1">${tag.repeat(100_000)}<a href="/2">`)).toBe(`</a><a href="/1"></a><a href="/2">`);
    }
    expect(flattenHtml("<a>".repeat(3))).toBe("</a><a>".repeat(3));
  });
});
