import { badRequest } from "../errors";
import { type Check, checkBool, checkDict, checkIntIn, checkIntRange, checkList, checkString, isDict, ValidationError } from "../lib/validator";
import { splitOnce } from "../lib/text";

/**
 * Zulip's message widgets (`/poll`, `/todo`, and bots' `widget_content`): the first
 * submessage of a widget message says what the widget is; readers' later submessages
 * (votes, new options, tasks) are its state, which clients fold up themselves.
 */
export interface WidgetContent {
  widget_type: string;
  extra_data: Record<string, unknown>;
}

/** Python's str.splitlines separators; a trailing empty line is no line. */
function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** A line without its list marker (`- ` or `* `), as Zulip reads poll options and tasks. */
const withoutListMarker = (line: string) => line.trim().replace(/^\s*[-*]?\s*/, "");

/**
 * The widget a message's content starts: `/poll Question` with one option per line,
 * or `/todo Title` with one `task: description` per line. Anything else is no widget
 * (`/me`, `/bogus`, "use /poll").
 */
export function widgetFromContent(content: string): WidgetContent | null {
  // The first word alone (runs on every message sent: no splitting of the whole content).
  const command = /^\S*/.exec(content)![0];
  if (command !== "/poll" && command !== "/todo") return null;
  const lines = splitLines(content.replace(command, ""));
  const heading = lines.length > 0 && lines[0] !== "" ? lines.shift()!.trim() : "";
  const items = lines.map(withoutListMarker).filter((line) => line.length > 0);
  if (command === "/poll") return { widget_type: "poll", extra_data: { question: heading, options: items } };
  const tasks = items.map((item) => {
    const [task, desc] = splitOnce(item, ": ");
    return { task: task.trim(), desc: desc === undefined ? "" : desc.trim() };
  });
  return { widget_type: "todo", extra_data: { task_list_title: heading, tasks } };
}

/**
 * The most a widget's submessage may hold. A poll vote or a task is tens of characters;
 * Zulip sets no limit, but each submessage is kept in (and rewrites) the message record.
 */
export const MAX_SUBMESSAGE_LENGTH = 10_000;

/** POST /messages `widget_content`: what a bot may attach (Zulip's check_widget_content: `zform` choices). */
export function checkWidgetContent(raw: string): WidgetContent {
  if (raw.length > MAX_SUBMESSAGE_LENGTH) throw badRequest(`Widgets: widget_content is too long (limit: ${MAX_SUBMESSAGE_LENGTH} characters)`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest("Widgets: API programmer sent invalid JSON content");
  }
  const fail = (why: string) => badRequest(`Widgets: ${why}`);
  if (!isDict(value)) throw fail("widget_content is not a dict");
  if (!("widget_type" in value)) throw fail("widget_type is not in widget_content");
  if (!("extra_data" in value)) throw fail("extra_data is not in widget_content");
  const { widget_type: type, extra_data: extra } = value;
  if (!isDict(extra)) throw fail("extra_data is not a dict");
  if (type !== "zform") throw fail(`unknown widget type: ${String(type)}`);
  if (!("type" in extra)) throw fail("zform is missing type field");
  if (extra.type !== "choices") throw fail(`unknown zform type: ${String(extra.type)}`);
  try {
    // Zulip's check_dict: these keys, others allowed (its trivia bot adds a "type" to each choice).
    checkDict(extra, "extra_data", { type: checkString, heading: checkString, choices: checkList }, true);
    (extra.choices as unknown[]).forEach((choice, i) =>
      checkDict(choice, `extra_data["choices"][${i}]`, { short_name: checkString, long_name: checkString, reply: checkString }, true),
    );
  } catch (e) {
    throw fail((e as Error).message);
  }
  return { widget_type: "zform", extra_data: extra };
}

/** Zulip caps option and task indexes (MAX_IDX in its widgets). */
const MAX_IDX = 1000;

/**
 * POST /submessage `content` for a poll or todo widget, as Zulip validates it: each
 * kind of change has exactly its fields, and only the widget's author may rename it.
 * Throws a ValidationError whose message is Zulip's.
 */
export function checkWidgetEvent(widgetType: string, data: unknown, isWidgetAuthor: boolean): void {
  const name = widgetType === "poll" ? "poll data" : "todo data";
  if (widgetType !== "poll" && widgetType !== "todo") return;
  const kind = checkDict(data, name, { type: checkString }, true).type;
  const index = checkIntRange(0, MAX_IDX);
  const fields = (checks: Record<string, Check>) => void checkDict(data, name, { type: checkString, ...checks }, false);
  if (widgetType === "poll") {
    if (kind === "vote") return fields({ key: checkString, vote: checkIntIn([1, -1]) });
    if (kind === "question") {
      if (!isWidgetAuthor) throw new ValidationError("You can't edit a question unless you are the author.");
      return fields({ question: checkString });
    }
    if (kind === "new_option") return fields({ option: checkString, idx: index });
    throw new ValidationError(`Unknown type for poll data: ${kind}`);
  }
  if (kind === "new_task") return fields({ key: index, task: checkString, desc: checkString, completed: checkBool });
  if (kind === "strike") return fields({ key: checkString });
  if (kind === "new_task_list_title") {
    if (!isWidgetAuthor) throw new ValidationError("You can't edit the task list title unless you are the author.");
    return fields({ title: checkString });
  }
  throw new ValidationError(`Unknown type for todo data: ${kind}`);
}
