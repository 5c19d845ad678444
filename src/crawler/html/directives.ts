// Indexing directives from <meta name="robots"> and X-Robots-Tag: the most restrictive one wins.

export interface Directives {
  noindex: boolean;
  nofollow: boolean;
}

export const NO_DIRECTIVES: Directives = { noindex: false, nofollow: false };

/** Directives that take a value after a colon; any other "name:" prefix names a bot. */
const VALUED = new Set(["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"]);

export function mergeDirectives(a: Directives, b: Directives): Directives {
  return { noindex: a.noindex || b.noindex, nofollow: a.nofollow || b.nofollow };
}

/** Applies one directive token ("noindex", "none", ...) to `into`; unknown tokens are ignored. */
function apply(into: Directives, token: string): Directives {
  switch (token.trim().toLowerCase()) {
    case "noindex":
      return { ...into, noindex: true };
    case "nofollow":
      return { ...into, nofollow: true };
    case "none":
      return { noindex: true, nofollow: true };
    default:
      return into;
  }
}

/** The content of `<meta name="robots">` (or `<meta name="genapi">`): a comma-separated list. */
export function metaDirectives(content: string): Directives {
  return content.split(",").reduce(apply, NO_DIRECTIVES);
}

/**
 * X-Robots-Tag (all its lines, as Headers joins them with ", "). A "bot:" prefix makes the
 * directives after it, up to the next prefix, apply to that bot only (Google's documented form);
 * only unprefixed directives and those for `productToken` count.
 */
export function headerDirectives(value: string | null, productToken: string): Directives {
  if (value === null) return NO_DIRECTIVES;
  let result = NO_DIRECTIVES;
  let forUs = true;
  for (const part of value.split(",")) {
    const prefixed = /^\s*([A-Za-z0-9_.-]+)\s*:(.*)$/.exec(part);
    let token = part;
    if (prefixed && !VALUED.has(prefixed[1]!.toLowerCase())) {
      forUs = prefixed[1]!.toLowerCase() === productToken.toLowerCase();
      token = prefixed[2]!;
    }
    if (forUs) result = apply(result, token);
  }
  return result;
}
