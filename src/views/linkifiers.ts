import type { Hearth } from "../context";
import { getRealm } from "../store/realm";

/**
 * A linkifier (the spec's Linkifier). Kept as an ordered list in the realm settings
 * (`linkifiers`), which the Markdown renderer reads; order matters (first match wins).
 */
export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string[];
}

export function getLinkifiers(h: Hearth): Linkifier[] {
  return (getRealm(h.store)?.settings?.linkifiers as Linkifier[] | undefined) ?? [];
}
