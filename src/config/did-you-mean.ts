// "Did you mean" for the command line: the known name closest to a mistyped one, when it is close
// enough to be the likely intent (a letter or two off, a swapped pair), else nothing.

/** Edit distance with adjacent transpositions counted as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name nearest to `typed` at most 2 edits away, and fewer edits than half its length (so
 * `-x` suggests nothing); the first in `known` order on a tie.
 */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(typed.length / 2)) + 1;
  for (const name of known) {
    const distance = editDistance(typed, name);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** " (did you mean X?)" or "". */
export function didYouMean(typed: string, known: Iterable<string>, prefix = ""): string {
  const name = closest(typed, known);
  return name === undefined ? "" : ` (did you mean ${prefix}${name}?)`;
}
