/**
 * Typeahead for the compose box, as Zulip's web app offers it: `@` for people and
 * groups, `#` for channels and `#channel>topic`, `:` for emoji. The word being typed
 * before the caret decides what is offered; choosing replaces that word with the
 * Markdown Zulip's server understands (`@**Full Name**`, `@*group*`,
 * `#**channel**`, `#**channel>topic**`, `:name:`).
 */
import { api } from "./api";
import { COMMON_EMOJI, unicodeGlyph } from "./emoji";
import { changed, S } from "./state";

export interface Suggestion {
  /** What the list shows. */
  label: string;
  /** A short note beside it (an e-mail address, "group", the emoji itself). */
  detail: string;
  /** The text that replaces the typed word. */
  insert: string;
}

export interface Completion {
  /** Where the typed word (its trigger character included) starts. */
  start: number;
  items: Suggestion[];
}

const LIMIT = 8;

/** User groups come from GET /user_groups the first time `@` is typed. */
let groups: { name: string; description: string }[] | null = null;
let loadingGroups = false;
function userGroups(): { name: string; description: string }[] {
  if (groups === null && !loadingGroups) {
    loadingGroups = true;
    void api("GET", "/user_groups")
      .then((answer) => {
        // System groups ("role:members", …) are not mentioned by name in Zulip's typeahead.
        groups = (answer.user_groups ?? []).filter((g: any) => !g.is_system_group && !g.deactivated);
        changed();
      })
      .catch(() => {
        loadingGroups = false;
      });
  }
  return groups ?? [];
}

const matches = (text: string, query: string) => {
  const lower = text.toLowerCase();
  return lower.startsWith(query) || lower.includes(` ${query}`) || lower.includes(query);
};
/** Those starting with the query first, then the rest in their order. */
const rank = <T,>(items: T[], name: (item: T) => string, query: string): T[] =>
  items.filter((item) => matches(name(item), query)).sort((a, b) => Number(!name(a).toLowerCase().startsWith(query)) - Number(!name(b).toLowerCase().startsWith(query)));

function people(query: string): Suggestion[] {
  const users = [...S.users.values()].filter((u) => u.is_active !== false && (matches(u.full_name, query) || u.email.toLowerCase().startsWith(query)));
  const ranked = rank(users, (u) => u.full_name, query).slice(0, LIMIT);
  // Two people with one name are told apart by ID, as Zulip writes it: @**Name|id**.
  const shared = (name: string) => [...S.users.values()].filter((u) => u.full_name === name).length > 1;
  const out: Suggestion[] = ranked.map((u) => ({ label: u.full_name, detail: u.email, insert: shared(u.full_name) ? `@**${u.full_name}|${u.user_id}** ` : `@**${u.full_name}** ` }));
  for (const g of rank(userGroups(), (g) => g.name, query).slice(0, 3)) out.push({ label: g.name, detail: "group", insert: `@*${g.name}* ` });
  return out.slice(0, LIMIT);
}

function channels(query: string): Suggestion[] {
  const arrow = query.indexOf(">");
  const subs = [...S.subs.values()];
  if (arrow < 0) {
    return rank(subs, (s) => s.name, query)
      .slice(0, LIMIT)
      .map((s) => ({ label: `#${s.name}`, detail: s.description.slice(0, 40), insert: `#**${s.name}** ` }));
  }
  const channelName = query.slice(0, arrow).replace(/^\*\*/, "");
  const sub = subs.find((s) => s.name.toLowerCase() === channelName);
  if (!sub) return [];
  const topicQuery = query.slice(arrow + 1);
  const topics = [...(S.topics.get(sub.stream_id)?.values() ?? [])].sort((a, b) => b.maxId - a.maxId);
  return rank(topics, (t) => t.name, topicQuery)
    .slice(0, LIMIT)
    .map((t) => ({ label: `#${sub.name} › ${t.name}`, detail: "topic", insert: `#**${sub.name}>${t.name}** ` }));
}

function emoji(query: string): Suggestion[] {
  const all: Suggestion[] = [
    ...COMMON_EMOJI.map(([name, code]) => ({ label: `:${name}:`, detail: unicodeGlyph(code), insert: `:${name}: ` })),
    ...[...S.realmEmoji.values()].filter((e) => !e.deactivated).map((e) => ({ label: `:${e.name}:`, detail: "custom", insert: `:${e.name}: ` })),
  ];
  return rank(all, (s) => s.label.slice(1), query).slice(0, LIMIT);
}

/** What to offer for the text before the caret, or null when nothing is being completed. */
export function complete(before: string): Completion | null {
  // A mention may hold spaces (full names), so it runs to the last `@` on the line.
  const mention = /(?:^|[\s(])@(?:\*\*?)?([^\n@*]{0,40})$/.exec(before);
  if (mention) {
    const query = mention[1].toLowerCase();
    if (query.endsWith("  ")) return null;
    const items = people(query.trim());
    return items.length ? { start: before.lastIndexOf("@"), items } : null;
  }
  const channel = /(?:^|[\s(])#(?:\*\*)?([^\n#*]{0,60})$/.exec(before);
  if (channel) {
    const query = channel[1].toLowerCase();
    const items = channels(query);
    return items.length ? { start: before.lastIndexOf("#"), items } : null;
  }
  const colon = /(?:^|[\s(]):([a-z0-9_+-]{2,})$/i.exec(before);
  if (colon) {
    const items = emoji(colon[1].toLowerCase());
    return items.length ? { start: before.lastIndexOf(":"), items } : null;
  }
  return null;
}

/** The text with the typed word replaced by the choice, and where the caret goes. */
export function applyCompletion(text: string, caret: number, completion: Completion, choice: Suggestion): { text: string; caret: number } {
  const head = text.slice(0, completion.start) + choice.insert;
  return { text: head + text.slice(caret), caret: head.length };
}

const LIST_ID = "compose-typeahead";
const optionId = (i: number) => `${LIST_ID}-${i}`;

/**
 * The ARIA combobox pattern for the box the list completes: screen readers hear that
 * suggestions are open and which one the arrows have reached, while the focus stays
 * in the box. (Preact's types allow only "textbox" on a textarea; a multi-line
 * combobox is what ARIA 1.1 describes, with aria-multiline.)
 */
export function comboboxAttributes(completion: Completion | null, selected: number) {
  return {
    role: "combobox" as "textbox",
    "aria-multiline": true,
    "aria-autocomplete": "list" as const,
    "aria-haspopup": "listbox" as const,
    "aria-expanded": completion !== null,
    "aria-controls": completion ? LIST_ID : undefined,
    "aria-activedescendant": completion ? optionId(selected) : undefined,
  };
}

export function CompletionList({ completion, selected, onPick }: { completion: Completion; selected: number; onPick(choice: Suggestion): void }) {
  return (
    <ul class="typeahead" id={LIST_ID} role="listbox" aria-label="Suggestions">
      {completion.items.map((item, i) => (
        <li
          key={item.insert}
          id={optionId(i)}
          role="option"
          aria-selected={i === selected}
          class={i === selected ? "active" : ""}
          // mousedown, not click: the textarea must keep its focus and caret.
          onMouseDown={(e) => (e.preventDefault(), onPick(item))}
        >
          <span class="ta-label">{item.label}</span> <span class="ta-detail">{item.detail}</span>
        </li>
      ))}
    </ul>
  );
}
