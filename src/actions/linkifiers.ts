import { isPermutationOf } from "../lib/collections";
import { pythonPatternToJs } from "../lib/text";
import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { getRealm, putRealm } from "../store/realm";
import { activeUserIds, type UserRecord } from "../store/users";
import type { Linkifier } from "../views/linkifiers";


export interface LinkifierInput {
  pattern: string;
  url_template: string;
  example_input?: string;
  reverse_template?: string;
  alternative_url_templates?: string[];
}

const MAX_PATTERN_LENGTH = 1000;
const MAX_TEMPLATE_LENGTH = 1024;

/** Named groups of a Zulip (Python-syntax) pattern, after checking it compiles. */
function patternGroups(pattern: string): Set<string> {
  if (pattern.trim() === "" || pattern.length > MAX_PATTERN_LENGTH) throw badRequest("Invalid linkifier pattern.");
  try {
    // Compiled as the renderer will.
    new RegExp(pythonPatternToJs(pattern), "u");
  } catch (e) {
    throw badRequest(`Bad regular expression: ${(e as Error).message}`);
  }
  return new Set([...pattern.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]));
}

/** RFC 6570 level-1 templates (`{name}`), whose variables are the pattern's named groups. */
function checkTemplate(template: string, groups: Set<string>, what: string): void {
  if (template.length > MAX_TEMPLATE_LENGTH) throw badRequest(`${what} is too long (limit: ${MAX_TEMPLATE_LENGTH} characters)`);
  if (!/^https?:\/\//i.test(template) && !template.startsWith("/")) throw badRequest("Enter a valid URL.");
  const vars = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  if (vars.some((v) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) || /[{}]/.test(template.replace(/\{[^}]*\}/g, ""))) {
    throw badRequest("Invalid URL template.");
  }
  if (vars.length !== groups.size || vars.some((v) => !groups.has(v)) || new Set(vars).size !== vars.length) {
    throw badRequest("Group variables in URL template must match the named groups in the pattern.");
  }
}

function checkLinkifier(input: LinkifierInput): Omit<Linkifier, "id"> {
  const groups = patternGroups(input.pattern);
  checkTemplate(input.url_template, groups, "url_template");
  for (const alt of input.alternative_url_templates ?? []) checkTemplate(alt, groups, "alternative_url_templates");
  if (input.reverse_template !== undefined && input.example_input === undefined) {
    throw badRequest("Example input is required for reverse linkifiers.");
  }
  return {
    pattern: input.pattern,
    url_template: input.url_template,
    example_input: input.example_input ?? null,
    reverse_template: input.reverse_template ?? null,
    alternative_url_templates: input.alternative_url_templates ?? [],
  };
}


async function writeLinkifiers(h: Hearth, change: (current: Linkifier[]) => Linkifier[]): Promise<void> {
  await commit(h, (tx) => {
    const realm = getRealm(h.store)!;
    const list = change([...((realm.settings.linkifiers as Linkifier[] | undefined) ?? [])]);
    putRealm(h.store, { ...realm, settings: { ...realm.settings, linkifiers: list } });
    // Queues whose clients lack linkifier_url_template drop this event (src/events/queues.ts).
    tx.notify({ type: "realm_linkifiers", realm_linkifiers: list }, activeUserIds(h));
  });
}

export async function doAddLinkifier(h: Hearth, user: UserRecord, input: LinkifierInput): Promise<number> {
  assertAdmin(user);
  const checked = checkLinkifier(input);
  let id = 0;
  await writeLinkifiers(h, (list) => {
    if (list.some((l) => l.pattern === checked.pattern)) throw badRequest("Linkifier with this pattern already exists.");
    id = h.store.nextId("linkifier");
    return [...list, { id, ...checked }];
  });
  return id;
}

const linkifierMissing = () => badRequest("Linkifier not found.");

export async function doUpdateLinkifier(h: Hearth, user: UserRecord, id: number, input: LinkifierInput): Promise<void> {
  assertAdmin(user);
  const checked = checkLinkifier(input);
  await writeLinkifiers(h, (list) => {
    const index = list.findIndex((l) => l.id === id);
    if (index < 0) throw linkifierMissing();
    if (list.some((l) => l.id !== id && l.pattern === checked.pattern)) throw badRequest("Linkifier with this pattern already exists.");
    list[index] = { id, ...checked };
    return list;
  });
}

export async function doRemoveLinkifier(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertAdmin(user);
  await writeLinkifiers(h, (list) => {
    if (!list.some((l) => l.id === id)) throw linkifierMissing();
    return list.filter((l) => l.id !== id);
  });
}

export async function doReorderLinkifiers(h: Hearth, user: UserRecord, order: number[]): Promise<void> {
  assertAdmin(user);
  await writeLinkifiers(h, (list) => {
    const ids = new Set(list.map((l) => l.id));
    if (!isPermutationOf(order, ids)) {
      throw badRequest("You must pass all the linkifiers in the new order.");
    }
    return order.map((id) => list.find((l) => l.id === id)!);
  });
}
