import type { StateInline } from "markdown-it";
import { escapeHtml } from "../lib/text";

/**
 * A time as Python's isoformat writes a UTC datetime, with Zulip's "Z": seconds always,
 * microseconds only when there are any.
 */
function isoUtc(ms: number): string {
  const totalMicros = Math.round(ms * 1000);
  const seconds = Math.floor(totalMicros / 1_000_000);
  const micros = totalMicros - seconds * 1_000_000;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}${micros > 0 ? `.${String(micros).padStart(6, "0")}` : ""}Z`;
}

/** Python's datetime reaches years 1 to 9999 (in milliseconds since the epoch): a time outside them is an error in Zulip. */
const TIME_RANGE = { min: -62_135_596_800_000, max: 253_402_300_799_999 };

/**
 * An ISO 8601 date and time as Zulip reads `<time:…>` since FL 451/503 (Python's
 * `datetime.fromisoformat`): a date (`YYYY-MM-DD` or `YYYYMMDD`), optionally a time
 * after `T` or a space (`HH`, `HH:MM`, `HH:MM:SS`, fractions of a second, or the
 * basic `HHMMSS`) and a zone (`Z`, `±HH`, `±HH:MM`, `±HHMM`). No zone means UTC.
 */
const ISO_8601 =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** When `input` (a Zulip global time) happens, in milliseconds since the epoch; null when it is no ISO 8601 time. */
function parseGlobalTime(input: string): number | null {
  const m = ISO_8601.exec(input);
  if (!m) return null;
  // The basic and extended forms are not mixed within the date (2024-0605 is neither).
  if ((input.slice(4, 5) === "-") !== (input.slice(7, 8) === "-")) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const micros = m[7] === undefined ? 0 : Number(m[7].slice(0, 6).padEnd(6, "0"));
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour, minute, second, 0);
  // Day 31 of a 30-day month rolls over: not a date.
  if (date.getUTCDate() !== day) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== "Z") {
    const hours = Number(zone.slice(1, 3));
    const minutes = zone.length > 3 ? Number(zone.slice(-2)) : 0;
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
  }
  const ms = date.getTime() - offsetMinutes * 60_000 + micros / 1000;
  return ms >= TIME_RANGE.min && ms <= TIME_RANGE.max ? ms : null;
}

/**
 * `<time:…>`, Zulip's global times: a `<time datetime="…">` element clients show in
 * each reader's own time zone, the input kept as its text; since FL 451 a time that
 * cannot be read stays as the escaped text it was (no error span). (Without this rule markdown-it read it as a `time:` autolink.)
 */
export function globalTimeRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = /^<time:([^>]*?)>/.exec(state.src.slice(state.pos));
  if (!m) return false;
  if (!silent) {
    const ms = parseGlobalTime(m[1]);
    state.push("html_inline", "", 0).content =
      ms === null
        ? escapeHtml(m[0])
        : `<time datetime="${isoUtc(ms)}">${escapeHtml(m[1])}</time>`;
  }
  state.pos += m[0].length;
  return true;
}
