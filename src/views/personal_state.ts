import { defineStatePart } from "../events/state";
import { getAlertWords, getMutedUsers, getSavedSnippets } from "../store/personal";
import { getProfileFields } from "../store/profile_fields";
import { PROFILE_FIELD_TYPES, profileFieldView } from "./profile_fields";

/** Register parts of per-user settings and custom profile fields. */

defineStatePart("alert_words", ["alert_words"], ({ h, user }) => ({
  alert_words: user ? getAlertWords(h.store, user.id) : [],
}));

defineStatePart("muted_users", ["muted_users"], ({ h, user }) => ({
  muted_users: user ? getMutedUsers(h.store, user.id) : [],
}));

defineStatePart("saved_snippets", ["saved_snippets"], ({ h, user }) => ({
  saved_snippets: user ? getSavedSnippets(h.store, user.id) : [],
}));

defineStatePart("custom_profile_fields", ["custom_profile_fields"], ({ h }) => ({
  custom_profile_fields: getProfileFields(h.store).map(profileFieldView),
  custom_profile_field_types: PROFILE_FIELD_TYPES,
}));
