/**
 * Every key space of the store, one LMDB named database each. Keys use lmdb-js's
 * ordered-binary encoding (arrays sort element by element, so a key ending in an ID
 * gives ordered range scans); values are msgpack.
 *
 * Adding a key space: add its name here with its layout, then a typed accessor in
 * `src/store/` that reads it. Index rows change in the same transaction as the data
 * they index.
 */
export const KEYSPACES = {
  /** "realm" → Realm; ["counter", name] → last allocated ID */
  meta: "meta",
  /** userId → UserRecord */
  users: "users",
  /** lower-cased delivery email → userId */
  usersByEmail: "users_by_email",
  /** userId → PresenceRecord (src/store/presence.ts) */
  presence: "presence",
  /** userId → string[] alert words, in the order added (src/store/personal.ts) */
  alertWords: "alert_words",
  /** [userId, mutedUserId] → unix seconds when muted */
  mutedUsers: "muted_users",
  /** [userId, snippetId] → SavedSnippet */
  savedSnippets: "saved_snippets",
  /** userId → UserStatusRecord (text and emoji; `away` is the presence_enabled setting) */
  userStatus: "user_status",
} as const;

export type KeyspaceName = keyof typeof KEYSPACES;
