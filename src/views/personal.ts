import { defineStatePart } from "../events/state";
import { getAlertWords, getMutedUsers, getSavedSnippets } from "../store/personal";

defineStatePart("alert_words", ["alert_words"], ({ h, user }) => ({ alert_words: user ? getAlertWords(h.store, user.id) : [] }));
defineStatePart("muted_users", ["muted_users"], ({ h, user }) => ({ muted_users: user ? getMutedUsers(h.store, user.id) : [] }));
defineStatePart("saved_snippets", ["saved_snippets"], ({ h, user }) => ({ saved_snippets: user ? getSavedSnippets(h.store, user.id) : [] }));
