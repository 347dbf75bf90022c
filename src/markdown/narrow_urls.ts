/** Zulip's URL-hash encoding of a narrow component (`%` becomes `.`). */
export function encodeHashComponent(s: string): string {
  let encoded = encodedComponents.get(s);
  if (encoded === undefined) {
    encoded = encodeURIComponent(s).replace(/\./g, "%2E").replace(/%/g, ".");
    // Every send's answer links its topic (and channel): the same few strings again and again.
    if (s.length <= MAX_KEPT_LENGTH) {
      if (encodedComponents.size >= MAX_KEPT) encodedComponents.clear();
      encodedComponents.set(s, encoded);
    }
  }
  return encoded;
}

const MAX_KEPT = 1000;
const MAX_KEPT_LENGTH = 200;
const encodedComponents = new Map<string, string>();

export function channelNarrowSlug(id: number, name: string): string {
  return `${id}-${encodeHashComponent(name.replace(/ /g, "-"))}`;
}
