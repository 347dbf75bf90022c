/** Zulip's URL-hash encoding of a narrow component (`%` becomes `.`). */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function channelNarrowSlug(id: number, name: string): string {
  return `${id}-${encodeHashComponent(name.replace(/ /g, "-"))}`;
}
