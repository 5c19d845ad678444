/**
 * The seen caches' eviction (the crawl state's URLs, the link ledger's statuses): past `size`
 * entries, the oldest tenth goes at once (or the excess, if larger; at least one), in insertion
 * order. An often met URL dropped costs one store lookup, then stays for another cache's worth.
 */
export function forgetOldest(cache: Set<string> | Map<string, unknown>, size: number): void {
  if (cache.size <= size) return;
  let drop = Math.max(1, Math.floor(size / 10), cache.size - size);
  for (const old of cache.keys()) {
    cache.delete(old);
    if (--drop === 0) break;
  }
}
