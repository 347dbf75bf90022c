/**
 * Unicode emoji by Zulip's name: the common names Zulip's picker offers, written out
 * here (code points as Zulip spells `emoji_code`: lower-case hex, `-` between points).
 * emojiNames adds every other emoji.
 */
export const UNICODE_EMOJI: Readonly<Record<string, string>> = {
  // Zulip's names, which differ from other apps' for some faces and animals: its "smile"
  // is 1f642 (others' "slight smile"), "cat" and "dog" the whole animals.
  smile: "1f642", big_smile: "1f604", smiley: "1f603", grinning: "1f600", grin: "1f601", joy: "1f602", rolling_on_the_floor_laughing: "1f923",
  rofl: "1f923", laughing: "1f606", sweat_smile: "1f605", wink: "1f609", blush: "1f60a", innocent: "1f607",
  slight_smile: "1f642", upside_down: "1f643", heart_eyes: "1f60d", kiss: "1f618", yum: "1f60b", stuck_out_tongue: "1f61b",
  thinking: "1f914", neutral: "1f610", expressionless: "1f611", unamused: "1f612", roll_eyes: "1f644", grimacing: "1f62c",
  relieved: "1f60c", pensive: "1f614", sleepy: "1f62a", sleeping: "1f634", mask: "1f637", sick: "1f922", cool: "1f60e",
  sunglasses: "1f60e", nerd: "1f913", confused: "1f615", worried: "1f61f", frown: "1f641", open_mouth: "1f62e",
  astonished: "1f632", flushed: "1f633", scream: "1f631", fearful: "1f628", cry: "1f622", sob: "1f62d", angry: "1f620",
  rage: "1f621", skull: "1f480", poop: "1f4a9", clown: "1f921", ghost: "1f47b", alien: "1f47d", robot: "1f916",
  smile_cat: "1f638", see_no_evil: "1f648", hear_no_evil: "1f649", speak_no_evil: "1f64a",
  heart: "2764", orange_heart: "1f9e1", yellow_heart: "1f49b", green_heart: "1f49a", blue_heart: "1f499",
  purple_heart: "1f49c", black_heart: "1f5a4", broken_heart: "1f494", sparkling_heart: "1f496", "100": "1f4af",
  boom: "1f4a5", zzz: "1f4a4", wave: "1f44b", ok: "1f197", ok_hand: "1f44c", thumbs_up: "1f44d", "+1": "1f44d",
  thumbsup: "1f44d", like: "1f44d", thumbs_down: "1f44e", "-1": "1f44e", thumbsdown: "1f44e", fist: "270a",
  punch: "1f44a", clap: "1f44f", raised_hands: "1f64c", open_hands: "1f450", handshake: "1f91d", pray: "1f64f",
  folded_hands: "1f64f", point_up: "261d", point_down: "1f447", point_left: "1f448", point_right: "1f449",
  muscle: "1f4aa", eyes: "1f440", brain: "1f9e0", tada: "1f389", party_popper: "1f389", confetti_ball: "1f38a",
  balloon: "1f388", gift: "1f381", trophy: "1f3c6", medal: "1f3c5", star: "2b50", star_struck: "1f929",
  sparkles: "2728", fire: "1f525", zap: "26a1", sunny: "2600", cloud: "2601", umbrella: "2602", snowflake: "2744",
  rainbow: "1f308", ocean: "1f30a", earth_africa: "1f30d", moon: "1f319", rocket: "1f680", airplane: "2708",
  car: "1f697", bike: "1f6b2", house: "1f3e0", office: "1f3e2", coffee: "2615", tea: "1f375", beer: "1f37a",
  wine_glass: "1f377", pizza: "1f355", cake: "1f370", apple: "1f34e", banana: "1f34c", cookie: "1f36a",
  dog: "1f415", cat: "1f408", rabbit: "1f407", octopus: "1f419", turtle: "1f422", bug: "1f41b", bee: "1f41d", unicorn: "1f984",
  check: "2714", check_mark: "2714", heavy_check_mark: "2714", white_check_mark: "2705", x: "274c", cross_mark: "274c",
  warning: "26a0", question: "2753", exclamation: "2757", bangbang: "203c", no_entry: "26d4", stop_sign: "1f6d1",
  bulb: "1f4a1", light_bulb: "1f4a1", book: "1f4d6", books: "1f4da", memo: "1f4dd", pencil: "270f", pen: "1f58a",
  paperclip: "1f4ce", lock: "1f512", unlock: "1f513", key: "1f511", bell: "1f514", mute: "1f507", speaker: "1f508",
  phone: "1f4de", computer: "1f4bb", keyboard: "2328", email: "1f4e7", calendar: "1f4c5", clock: "1f570",
  hourglass: "231b", stopwatch: "23f1", chart: "1f4c8", money: "1f4b0", gear: "2699", wrench: "1f527",
  hammer: "1f528", tools: "1f6e0", link: "1f517", mag: "1f50d", search: "1f50d", pushpin: "1f4cc", flag: "1f3f3",
  checkered_flag: "1f3c1", music: "1f3b5", headphones: "1f3a7", camera: "1f4f7", video_camera: "1f4f9", tv: "1f4fa",
  movie_camera: "1f3a5", soccer: "26bd", basketball: "1f3c0", plus: "2795", minus: "2796",
  hundred: "1f4af", working_on_it: "1f6e0", slight_frown: "1f641", upvote: "1f53c", downvote: "1f53d",
  heart_hands: "1faf6", saluting_face: "1fae1", melting_face: "1fae0", people_hugging: "1fac2",
};

interface EmojiNames {
  codeByName: Map<string, string>;
  /** Each code's names, the canonical one first. */
  namesByCode: Map<string, string[]>;
}
let names: EmojiNames | undefined;

/**
 * Every emoji's names: Zulip's from the table above first, then, for every emoji Unicode
 * lists, its CLDR name in snake_case (`weary_face`), from the unicode-emoji-json
 * package, unless that name is taken. Zulip's own names for the emoji outside the
 * table (its list is its own) are not known here, so those emoji go by their CLDR
 * names. Built at first use.
 */
function emojiNames(): EmojiNames {
  if (names) return names;
  const built: EmojiNames = { codeByName: new Map(), namesByCode: new Map() };
  const add = (name: string, code: string) => {
    if (built.codeByName.has(name)) return;
    built.codeByName.set(name, code);
    const list = built.namesByCode.get(code);
    if (list) list.push(name);
    else built.namesByCode.set(code, [name]);
  };
  for (const [name, code] of Object.entries(UNICODE_EMOJI)) add(name, code);
  const unicode = require("unicode-emoji-json/data-by-emoji.json") as Record<string, { slug: string }>;
  for (const [emoji, { slug }] of Object.entries(unicode)) add(slug, emojiCodeOfText(emoji));
  return (names = built);
}

/** Looks an emoji name up; Zulip names are lower-case with `_`. */
export function emojiCodeFor(name: string): string | undefined {
  return emojiNames().codeByName.get(name);
}

/** The canonical name of a code point (for reactions given by code only, and emoji typed as characters). */
export function emojiNameFor(code: string): string | undefined {
  return emojiNames().namesByCode.get(code)?.[0];
}

/** `code_to_names` of the emoji data clients load from `server_emoji_data_url`. */
export function emojiCodeToNames(): Record<string, string[]> {
  return Object.fromEntries(emojiNames().namesByCode);
}

/** Zulip's `emoji_code` of an emoji typed as characters: its code points without the emoji variation selector. */
export function emojiCodeOfText(text: string): string {
  const points: string[] = [];
  for (const char of text) {
    const point = char.codePointAt(0)!;
    if (point !== 0xfe0f) points.push(point.toString(16).padStart(4, "0"));
  }
  return points.join("-");
}

/**
 * The emoticons Zulip turns into emoji for senders with `translate_emoticons` on (its
 * EMOTICON_CONVERSIONS), to the names they become.
 */
export const EMOTICON_CONVERSIONS: Readonly<Record<string, string>> = {
  ":)": "smile", "(:": "smile", ":(": "frown", "<3": "heart", ":|": "neutral", ":/": "confused", ";)": "wink",
  ":D": "grinning", ":o": "open_mouth", ":O": "open_mouth", ":p": "stuck_out_tongue", ":P": "stuck_out_tongue",
};

/** Where clients load the `zulip` emoji (reaction_type `zulip_extra_emoji`, and `:zulip:` in messages) from. */
export const ZULIP_EXTRA_EMOJI_PATH = "/static/generated/emoji/images/emoji/unicode/zulip.png";
