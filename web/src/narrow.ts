/**
 * Views and their address: each view has the fragment Zulip's web app gives it
 * (`#narrow/channel/<id>-<name>/topic/<topic>`, `#narrow/dm/<ids>-<slug>`,
 * `#narrow/is/starred`, `#recent`, …), so the back button, shared links and the links
 * the server writes into messages all lead to the same view.
 */
import type { Message } from "./model";

export type Narrow =
  | { kind: "channel"; streamId: number; topic?: string }
  | { kind: "dm"; ids: number[] }
  | { kind: "is"; what: "starred" | "mentioned" | "dm" }
  | { kind: "all" }
  | { kind: "search"; query: string }
  | { kind: "recent" };

/** Zulip's encoding of one hash component: percent-encoding with `.` for `%`. */
export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function decodeHashComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    return text;
  }
}

const slug = (name: string) => encodeHashComponent(name.replace(/ /g, "-"));

export function narrowHash(n: Narrow, names: { channel(id: number): string; user(id: number): string }): string {
  switch (n.kind) {
    case "channel": {
      const base = `#narrow/channel/${n.streamId}-${slug(names.channel(n.streamId))}`;
      return n.topic === undefined ? base : `${base}/topic/${encodeHashComponent(n.topic)}`;
    }
    case "dm":
      return `#narrow/dm/${n.ids.join(",")}-${n.ids.length === 1 ? slug(names.user(n.ids[0]).split(" ")[0].toLowerCase()) : "group"}`;
    case "is":
      return `#narrow/is/${n.what}`;
    case "search":
      return `#narrow/search/${encodeHashComponent(n.query)}`;
    case "recent":
      return "#recent";
    case "all":
      return "#feed";
  }
}

/** The view a fragment names; unknown fragments lead to the recent conversations. */
export function parseHash(hash: string): Narrow {
  const parts = hash.replace(/^#/, "").split("/");
  if (parts[0] !== "narrow") {
    if (parts[0] === "feed" || parts[0] === "all_messages") return { kind: "all" };
    return { kind: "recent" };
  }
  let narrow: Narrow | null = null;
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const [operator, operand] = [parts[i], parts[i + 1]];
    if (operator === "channel" || operator === "stream") {
      const id = Number.parseInt(operand, 10);
      if (Number.isFinite(id)) narrow = { kind: "channel", streamId: id };
    } else if ((operator === "topic" || operator === "subject") && narrow?.kind === "channel") {
      narrow = { kind: "channel", streamId: narrow.streamId, topic: decodeHashComponent(operand) };
    } else if (operator === "dm" || operator === "pm-with") {
      const ids = operand.split("-")[0].split(",").map(Number).filter(Number.isFinite);
      if (ids.length) narrow = { kind: "dm", ids: ids.sort((a, b) => a - b) };
    } else if (operator === "is") {
      const what = operand === "private" ? "dm" : operand;
      if (what === "starred" || what === "mentioned" || what === "dm") narrow = { kind: "is", what };
    } else if (operator === "search") {
      narrow = { kind: "search", query: decodeHashComponent(operand) };
    }
  }
  return narrow ?? { kind: "recent" };
}

/** The narrow as GET /messages takes it. */
export function apiNarrow(n: Narrow): { operator: string; operand: unknown }[] {
  switch (n.kind) {
    case "channel":
      return [{ operator: "channel", operand: n.streamId }, ...(n.topic === undefined ? [] : [{ operator: "topic", operand: n.topic }])];
    case "dm":
      return [{ operator: "dm", operand: n.ids }];
    case "is":
      return [{ operator: "is", operand: n.what }];
    case "search":
      return [{ operator: "search", operand: n.query }];
    default:
      return [];
  }
}

/** The other participants of a direct message (just me, for a message to myself). */
export function dmPartners(m: Message, me: number): number[] {
  if (!Array.isArray(m.display_recipient)) return [];
  const others = m.display_recipient.map((r) => r.id).filter((id) => id !== me);
  return (others.length ? others : [me]).sort((a, b) => a - b);
}

/** Whether a message belongs in a view; search is the server's to decide (null). */
export function narrowMatches(n: Narrow, m: Message, me: number): boolean | null {
  switch (n.kind) {
    case "channel":
      return m.type === "stream" && m.stream_id === n.streamId && (n.topic === undefined || m.subject.toLowerCase() === n.topic.toLowerCase());
    case "dm":
      return m.type === "private" && dmPartners(m, me).join(",") === n.ids.join(",");
    case "is":
      if (n.what === "dm") return m.type === "private";
      if (n.what === "starred") return m.flags.includes("starred");
      return m.flags.some((f) => f === "mentioned" || f === "wildcard_mentioned" || f === "stream_wildcard_mentioned" || f === "topic_wildcard_mentioned");
    case "all":
      return true;
    default:
      return null;
  }
}

/** One conversation: a channel's topic or a set of DM participants. */
export function conversationKey(m: Message, me: number): string {
  return m.type === "stream" ? `s:${m.stream_id}:${m.subject.toLowerCase()}` : `d:${dmPartners(m, me).join(",")}`;
}
