import { badRequest } from "../errors";

/**
 * The narrow a queue registers with (`POST /register` `narrow`): only message events
 * matching every term reach the queue; other event types are unaffected (Zulip's
 * `build_narrow_filter`). Accepts the legacy `[["stream", "x"]]` pairs and the
 * modern `{operator, operand, negated}` objects.
 */
export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

const SUPPORTED = new Set(["stream", "channel", "topic", "subject", "sender", "is", "dm", "pm-with", "streams", "channels", "search", "id", "near", "with", "has", "dm-including", "group-pm-with", "mentions"]);

export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (!Array.isArray(raw)) throw badRequest("Invalid narrow");
  return raw.map((term) => {
    if (Array.isArray(term) && term.length >= 2 && typeof term[0] === "string") {
      return { operator: term[0], operand: term[1], negated: false };
    }
    if (term && typeof term === "object" && typeof (term as any).operator === "string" && "operand" in term) {
      return { operator: (term as any).operator, operand: (term as any).operand, negated: (term as any).negated === true };
    }
    throw badRequest("Invalid narrow");
  }).map((term) => {
    if (!SUPPORTED.has(term.operator)) throw badRequest(`Invalid narrow operator: unknown operator ${term.operator}`);
    // Zulip's operands: a string or an integer, or a list of them for the DM operators.
    // Anything else would reach matchesTerm (on every delivery) as an object.
    if (!isOperand(term.operand) && !(Array.isArray(term.operand) && term.operand.every(isOperand))) throw badRequest("Invalid narrow");
    return term;
  });
}

const isOperand = (value: unknown) => typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));

type Message = Record<string, any>;

function matchesTerm(term: NarrowTerm, message: Message, flags: readonly string[]): boolean {
  const operand = term.operand;
  const isStream = message.type === "stream";
  switch (term.operator) {
    case "stream":
    case "channel":
      if (!isStream) return false;
      if (typeof operand === "number") return message.stream_id === operand;
      return String(message.display_recipient).toLowerCase() === String(operand).toLowerCase();
    case "streams":
    case "channels":
      // No message is sent to an archived channel (FL 489's "channels:archived").
      if (operand === "archived") return false;
      return isStream; // "streams:public": a queue only gets messages its user may see anyway
    case "mentions": {
      // FL 446: a personal, visible mention as rendered; a user named by email is not resolved here.
      const id = typeof operand === "number" ? operand : /^\d+$/.test(String(operand)) ? Number(operand) : null;
      if (id === null) return true;
      return String(message.rendered_content ?? message.content ?? "").includes(`<span class="user-mention" data-user-id="${id}">`);
    }
    case "topic":
    case "subject":
      return isStream && String(message.subject ?? message.topic ?? "").toLowerCase() === String(operand).toLowerCase();
    case "sender":
      return typeof operand === "number"
        ? message.sender_id === operand
        : String(message.sender_email).toLowerCase() === String(operand).toLowerCase();
    case "is":
      switch (operand) {
        case "private":
        case "dm":
          return message.type === "private";
        case "mentioned":
          return flags.includes("mentioned") || flags.includes("wildcard_mentioned") || flags.includes("stream_wildcard_mentioned") || flags.includes("topic_wildcard_mentioned");
        case "starred":
          return flags.includes("starred");
        case "alerted":
          return flags.includes("has_alert_word");
        case "unread":
          return !flags.includes("read");
        default:
          return true;
      }
    case "dm":
    case "pm-with": {
      if (message.type !== "private") return false;
      const wanted = (Array.isArray(operand) ? operand : String(operand).split(",")).map((v) => String(v).trim().toLowerCase());
      const present = (message.display_recipient as any[]).flatMap((r) => [String(r.id), String(r.email).toLowerCase()]);
      return wanted.every((w) => present.includes(w));
    }
    default:
      // Operators that need the message store (search, has, near…) do not filter live events.
      return true;
  }
}

export function messageMatchesNarrow(narrow: readonly NarrowTerm[], message: Message, flags: readonly string[]): boolean {
  for (const term of narrow) {
    if (matchesTerm(term, message, flags) === term.negated) return false;
  }
  return true;
}
