import type { Hearth } from "../context";
import type { UserRecord } from "../store/users";

/** The newest message ID the user has received; -1 when none (Zulip's convention). */
export function maxMessageIdFor(_h: Hearth, _user: UserRecord): number {
  return -1;
}
