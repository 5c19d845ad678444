// The synthetic website every crawler walks: `pages` HTML pages of 15-30 KB with about 20 internal
// links each (root-relative, relative, "./", fragments), written under a directory. Deterministic for
// a given size, so runs and tools see the same site.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface SiteLayout {
  /** URL paths of every HTML page, "/" first: exactly the URL set a sitemap of the site lists. */
  paths: string[];
  /** Bytes of HTML written. */
  htmlBytes: number;
}

const ARTICLES_PER_SECTION = 500;
const NAV_SECTIONS = 10;
const RELATED_LINKS = 6;
const LISTED_ARTICLES = 20;

/** mulberry32: a small seeded generator, so the site is the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "crawler sitemap origin request latency throughput canonical anchor header budget index queue " +
  "parser socket stream render archive section article morning river garden window market winter " +
  "signal harbour lantern pattern meadow quarter velvet orbit ledger compass thunder pocket summit"
).split(" ");

/** A pool of paragraphs that pages draw from: realistic prose sizes without generating 1 GB of text. */
function paragraphPool(rand: () => number): string[] {
  const pool: string[] = [];
  for (let p = 0; p < 64; p++) {
    const words: string[] = [];
    const count = 60 + Math.floor(rand() * 80);
    for (let w = 0; w < count; w++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
    pool.push(`<p>${words.join(" ")}.</p>`);
  }
  return pool;
}

/** Page i of a site of `pages` pages: 0 is the home page, 1..sections the section indexes, then articles. */
export function siteLayout(pages: number): { sections: number; path: (i: number) => string; sectionOf: (i: number) => number } {
  if (!Number.isInteger(pages) || pages < 3) throw new Error("a site has at least 3 pages");
  const sections = Math.max(1, Math.min(Math.round(pages / ARTICLES_PER_SECTION), Math.floor((pages - 1) / 2)));
  const sectionOf = (i: number) => (i <= sections ? i : ((i - sections - 1) % sections) + 1);
  const path = (i: number) => (i === 0 ? "/" : i <= sections ? `/section-${i}/` : `/section-${sectionOf(i)}/page-${i}.html`);
  return { sections, path, sectionOf };
}

/** Writes the site under `dir` (index.html for "/" paths), plus robots.txt and two static assets. */
export function generateSite(dir: string, pages: number, seed = 20261121): SiteLayout {
  const { sections, path, sectionOf } = siteLayout(pages);
  const rand = random(seed);
  const pool = paragraphPool(rand);
  const firstArticle = sections + 1;
  const articles = pages - firstArticle;
  const article = (n: number) => firstArticle + (((n % articles) + articles) % articles);

  /** How page `from` links to page `to`: relative within a section, root-relative otherwise. */
  const href = (from: number, to: number): string => {
    const target = path(to);
    if (from > sections && to > sections && sectionOf(from) === sectionOf(to)) return target.slice(target.lastIndexOf("/") + 1);
    return from > sections ? `..${target}` : target;
  };

  const paths: string[] = [];
  let htmlBytes = 0;
  for (let i = 0; i < pages; i++) {
    const links: string[] = [`<a href="/">Home</a>`];
    const base = i === 0 ? 1 : sectionOf(i);
    for (let k = 0; k < NAV_SECTIONS; k++) {
      const s = ((base + k - 1) % sections) + 1;
      // A small site has fewer sections than the menu has entries: it lists popular articles instead.
      links.push(k < sections ? `<a href="/section-${s}/">Section ${s}</a>` : `<a href="${path(article(k))}">Popular ${k}</a>`);
    }
    const body: string[] = [];
    if (i > sections) {
      body.push(`<nav class="crumbs"><a href="./">Section ${sectionOf(i)}</a> <a href="#top">Top</a></nav>`);
      const prev = article(i - firstArticle - 1);
      const next = article(i - firstArticle + 1);
      body.push(`<a rel="prev" href="${href(i, prev)}">Previous</a> <a rel="next" href="${href(i, next)}">Next</a>`);
      for (let r = 0; r < RELATED_LINKS; r++) {
        const to = article(Math.floor(rand() * articles));
        const fragment = r % 3 === 0 ? "#comments" : "";
        body.push(`<li><a href="${r % 2 === 0 ? path(to) : href(i, to)}${fragment}">Related ${to}</a></li>`);
      }
    } else {
      // Home and section indexes list articles, the way a blog's index does.
      for (let k = 0; k < Math.min(LISTED_ARTICLES, articles); k++) {
        const to = i === 0 ? article(k) : article(i - 1 + k * sections);
        body.push(`<li><a href="${path(to)}">Article ${to}</a></li>`);
      }
    }
    const target = 15_000 + Math.floor(rand() * 15_000);
    let html = `${head(path(i), links)}<main><article><h1>Page ${i}</h1>${body.join("\n")}`;
    while (html.length < target) html += `${pool[Math.floor(rand() * pool.length)]!}\n`;
    html += `</article></main><footer><a href="/">genapi bench site</a></footer></body></html>\n`;
    const file = join(dir, path(i).endsWith("/") ? `${path(i)}index.html` : path(i));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, html);
    paths.push(path(i));
    htmlBytes += html.length;
  }
  mkdirSync(join(dir, "static"), { recursive: true });
  writeFileSync(join(dir, "static/site.css"), "body{font-family:sans-serif;max-width:60em;margin:auto}\n");
  writeFileSync(join(dir, "static/logo.svg"), `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>\n`);
  writeFileSync(join(dir, "robots.txt"), "User-agent: *\nDisallow:\n");
  return { paths, htmlBytes };
}

function head(path: string, nav: string[]): string {
  return (
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Bench ${path}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="description" content="A page of the genapi benchmark site.">` +
    `<link rel="stylesheet" href="/static/site.css"><script>window.dataLayer = [];</script></head>\n` +
    `<body id="top"><header><img src="/static/logo.svg" alt=""><nav>${nav.join(" ")}</nav></header>\n`
  );
}
