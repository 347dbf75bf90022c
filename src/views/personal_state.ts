import { nextOnboardingSteps } from "./onboarding_steps";
import { statePart } from "./state_parts";
import { allUserStatuses, getAlertWords, getMutedUsers, getSavedSnippets } from "../store/personal";
import { allUsers } from "../store/users";
import { statusView } from "./user_status";
import { mutedTopicsView } from "./user_topics";
import { getUserTopics } from "../store/user_topics";
import { topicDisplayName } from "./messages";
import { getDrafts } from "./drafts";
import { getNavigationViews } from "./navigation_views";
import { getRealmDomains, realmDomainView } from "./realm_domains";
import { getChannelFolders } from "./channel_folders";
import { realmEmojiDict } from "./realm_emoji";
import { userSetting } from "./settings";
import { PROFILE_FIELD_TYPES, profileFieldsView } from "./profile_fields";
import { getLinkifiers } from "./linkifiers";
import { getPlaygrounds } from "./playgrounds";

/** Register parts of per-user settings and custom profile fields. */

export const alertWordsPart = statePart("alert_words", ["alert_words"], ({ h, user }) => ({
  alert_words: user ? getAlertWords(h.store, user.id) : [],
}));

export const mutedUsersPart = statePart("muted_users", ["muted_users"], ({ h, user }) => ({
  muted_users: user ? getMutedUsers(h.store, user.id) : [],
}));

export const savedSnippetsPart = statePart("saved_snippets", ["saved_snippets"], ({ h, user }) => ({
  saved_snippets: user ? getSavedSnippets(h.store, user.id) : [],
}));

export const customProfileFieldsPart = statePart("custom_profile_fields", ["custom_profile_fields"], ({ h }) => ({
  custom_profile_fields: profileFieldsView(h),
  custom_profile_field_types: PROFILE_FIELD_TYPES,
}));

/** Every user with a status (or away): `{ "<user_id>": { status_text?, emoji_*?, away? } }`. */
export const userStatusPart = statePart("user_status", ["user_status"], ({ h }) => {
  const statuses = new Map(allUserStatuses(h.store));
  const user_status: Record<string, Record<string, unknown>> = {};
  for (const u of allUsers(h.store)) {
    if (!u.is_active || u.is_system_bot) continue;
    const view = statusView(statuses.get(u.id), u);
    if (Object.keys(view).length > 0) user_status[String(u.id)] = view;
  }
  return { user_status };
});

export const userTopicsPart = statePart("user_topics", ["user_topic"], ({ h, user, capabilities }) => ({
  // FL 334: without empty_topic_name, "" shows as the realm's display name (as the user_topic event does).
  user_topics: user
    ? getUserTopics(h.store, user.id).map((t) => ({ ...t, topic_name: topicDisplayName(h, t.topic_name, { allowEmptyTopicName: capabilities.empty_topic_name }) }))
    : [],
}));

// The legacy list only for clients that do not follow user_topic (as Zulip does).
export const mutedTopicsPart = statePart("muted_topics", (ctx) => ctx.want("muted_topics") && !ctx.want("user_topic"), ({ h, user }) => ({
  muted_topics: user ? mutedTopicsView(h, user.id) : [],
}));

export const onboardingStepsPart = statePart("onboarding_steps", ["onboarding_steps"], ({ h, user }) => ({
  onboarding_steps: user ? nextOnboardingSteps(h.store, user.id) : [],
}));

// Drafts are only synchronized for users who allow it (enable_drafts_synchronization).
export const draftsPart = statePart("drafts", ["drafts"], ({ h, user }) => ({
  drafts: user && userSetting(user, "enable_drafts_synchronization") !== false ? getDrafts(h, user.id) : [],
}));

export const realmEmojiPart = statePart("realm_emoji", ["realm_emoji"], ({ h }) => ({ realm_emoji: realmEmojiDict(h) }));

export const navigationViewsPart = statePart("navigation_views", ["navigation_views", "navigation_view"], ({ h, user }) => ({
  navigation_views: user ? getNavigationViews(h, user.id) : [],
}));

export const realmDomainsPart = statePart("realm_domains", ["realm_domains"], ({ h }) => ({ realm_domains: getRealmDomains(h).map(realmDomainView) }));

// Clients without linkifier_url_template get no linkifiers (spec: client_capabilities).
export const realmLinkifiersPart = statePart("realm_linkifiers", ["realm_linkifiers"], ({ h, capabilities }) => ({
  realm_linkifiers: capabilities.linkifier_url_template ? getLinkifiers(h) : [],
}));

export const channelFoldersPart = statePart("channel_folders", ["channel_folders", "channel_folder"], ({ h }) => ({ channel_folders: getChannelFolders(h) }));

export const realmPlaygroundsPart = statePart("realm_playgrounds", ["realm_playgrounds"], ({ h }) => ({ realm_playgrounds: getPlaygrounds(h) }));
