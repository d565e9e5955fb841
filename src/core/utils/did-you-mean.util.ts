/** Edit distance (insertions, deletions, substitutions, adjacent swaps), stopping early past `limit`. */
function distance(a: string, b: string, limit: number): number {
  // Stryker disable next-line ConditionalExpression: equivalent — a fast exit; names this far apart in length end past the limit anyway
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Stryker disable next-line ArrayDeclaration: equivalent — the row before the previous one is read only from the second row on
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      // An adjacent swap (on the first row or column, the out-of-range character is undefined: no swap).
      if (a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      current.push(d);
      best = Math.min(best, d);
    }
    // Stryker disable next-line ConditionalExpression: equivalent — a fast exit; no later row gets below this one's best
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The candidate a mistyped name most likely meant: the closest one within a third of its length (at
 * least one edit, at most three), ignoring case; `undefined` when none is that close. The start-up
 * errors use it for their "did you mean" hints.
 *
 * @publicApi
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(wanted.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const d = distance(wanted, candidate.toLowerCase(), limit);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `did you mean "x"?` for the closest candidate, or `undefined`. @internal */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const closest = closestName(name, candidates);
  return closest === undefined ? undefined : `did you mean "${closest}"?`;
}

/** `known: a, b`, led by a "did you mean" for a near miss (predicate names: the built-in ones make it never empty). @internal */
export function knownNames(name: string, known: readonly string[]): string {
  const hint = didYouMean(name, known);
  const list = `known: ${known.join(', ')}`;
  return hint ? `${hint}; ${list}` : list;
}

/** `rule (did you mean "x"?)`, or the rule alone when nothing is close. @internal */
export function withHint(rule: string, name: string, candidates: Iterable<string>): string {
  const hint = didYouMean(name, candidates);
  return hint ? `${rule} (${hint})` : rule;
}
