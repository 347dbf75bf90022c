import { nextOnboardingSteps } from "../actions/onboarding_steps";
import { defineStatePart } from "../events/state";
import { allUserStatuses, getAlertWords, getMutedUsers, getSavedSnippets } from "../store/personal";
import { allUsers } from "../store/users";
import { statusView } from "../actions/user_status";
import { mutedTopicsView } from "../actions/user_topics";
import { getUserTopics } from "../store/user_topics";
import { topicDisplayName } from "./messages";
import { getDrafts } from "../actions/drafts";
import { getNavigationViews } from "../actions/navigation_views";
import { getRealmDomains, realmDomainView } from "./realm_domains";
import { getLinkifiers } from "./linkifiers";
import { getChannelFolders } from "../actions/channel_folders";
import { getPlaygrounds } from "./playgrounds";
import { realmEmojiDict } from "./realm_emoji";
import { userSetting } from "./settings";
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

/** Every user with a status (or away): `{ "<user_id>": { status_text?, emoji_*?, away? } }`. */
defineStatePart("user_status", ["user_status"], ({ h }) => {
  const statuses = new Map(allUserStatuses(h.store));
  const user_status: Record<string, Record<string, unknown>> = {};
  for (const u of allUsers(h.store)) {
    if (!u.is_active || u.is_system_bot) continue;
    const view = statusView(statuses.get(u.id), u);
    if (Object.keys(view).length > 0) user_status[String(u.id)] = view;
  }
  return { user_status };
});

defineStatePart("user_topics", ["user_topic"], ({ h, user, capabilities }) => ({
  // FL 334: without empty_topic_name, "" shows as the realm's display name (as the user_topic event does).
  user_topics: user
    ? getUserTopics(h.store, user.id).map((t) => ({ ...t, topic_name: topicDisplayName(h, t.topic_name, { allowEmptyTopicName: capabilities.empty_topic_name }) }))
    : [],
}));

// The legacy list only for clients that do not follow user_topic (as Zulip does).
defineStatePart("muted_topics", (ctx) => ctx.want("muted_topics") && !ctx.want("user_topic"), ({ h, user }) => ({
  muted_topics: user ? mutedTopicsView(h, user.id) : [],
}));

// Drafts are only synchronized for users who allow it (enable_drafts_synchronization).
defineStatePart("onboarding_steps", ["onboarding_steps"], ({ h, user }) => ({
  onboarding_steps: user ? nextOnboardingSteps(h.store, user.id) : [],
}));

defineStatePart("drafts", ["drafts"], ({ h, user }) => ({
  drafts: user && userSetting(user, "enable_drafts_synchronization") !== false ? getDrafts(h, user.id) : [],
}));

defineStatePart("realm_emoji", ["realm_emoji"], ({ h }) => ({ realm_emoji: realmEmojiDict(h) }));

defineStatePart("navigation_views", ["navigation_views", "navigation_view"], ({ h, user }) => ({
  navigation_views: user ? getNavigationViews(h, user.id) : [],
}));

defineStatePart("realm_domains", ["realm_domains"], ({ h }) => ({ realm_domains: getRealmDomains(h).map(realmDomainView) }));

// Clients without linkifier_url_template get no linkifiers (spec: client_capabilities).
defineStatePart("realm_linkifiers", ["realm_linkifiers"], ({ h, capabilities }) => ({
  realm_linkifiers: capabilities.linkifier_url_template ? getLinkifiers(h) : [],
}));

defineStatePart("channel_folders", ["channel_folders", "channel_folder"], ({ h }) => ({ channel_folders: getChannelFolders(h) }));

defineStatePart("realm_playgrounds", ["realm_playgrounds"], ({ h }) => ({ realm_playgrounds: getPlaygrounds(h) }));
