/**
 * Every state part of POST /register, in the order register gives them (the order
 * of keys in its answer). Each part names the event types that keep it current; see
 * src/views/state_parts.ts.
 */
import { statePart, type StatePart } from "./state_parts";
import { realmDefaultStreamGroupsPart } from "./default_channel_groups";
import { realmDefaultStreamsPart, realmUserGroupsPart, streamsPart, subscriptionsPart } from "./channel_state";
import { alertWordsPart, channelFoldersPart, customProfileFieldsPart, draftsPart, mutedTopicsPart, mutedUsersPart, navigationViewsPart, onboardingStepsPart, realmDomainsPart, realmEmojiPart, realmLinkifiersPart, realmPlaygroundsPart, savedSnippetsPart, userStatusPart, userTopicsPart } from "./personal_state";
import { remindersPart, scheduledMessagesPart } from "./scheduled_state";
import { maxMessageIdPart, presencesPart, realmBotPart, realmPart, realmUserPart, realmUserSettingsDefaultsPart, userSettingsPart } from "./register";
import { recentPrivateConversationsPart, starredMessagesPart, unreadMsgsPart } from "./message_state";
import { realmIncomingWebhookBotsPart } from "./webhooks";
import { devicesPart } from "./client_devices";

export const REGISTER_STATE_PARTS: readonly StatePart[] = [
  subscriptionsPart,
  streamsPart,
  realmDefaultStreamsPart,
  realmUserGroupsPart,
  realmDefaultStreamGroupsPart,
  alertWordsPart,
  mutedUsersPart,
  savedSnippetsPart,
  customProfileFieldsPart,
  userStatusPart,
  userTopicsPart,
  mutedTopicsPart,
  onboardingStepsPart,
  draftsPart,
  realmEmojiPart,
  navigationViewsPart,
  realmDomainsPart,
  realmLinkifiersPart,
  channelFoldersPart,
  realmPlaygroundsPart,
  scheduledMessagesPart,
  remindersPart,
  realmPart,
  realmUserSettingsDefaultsPart,
  realmUserPart,
  realmBotPart,
  userSettingsPart,
  maxMessageIdPart,
  presencesPart,
  // Documented empty values of capabilities that do not exist yet: truthful, since no
  // such data can exist until the capability lands and gives its own part.
  statePart("realm_filters", ["realm_filters"], () => ({ realm_filters: [] })),
  statePart("realm_embedded_bots", ["realm_embedded_bots"], () => ({ realm_embedded_bots: [] })),
  statePart("stop_words", ["stop_words"], () => ({ stop_words: [] })),
  statePart("has_zoom_token", ["video_calls", "has_zoom_token"], () => ({ has_zoom_token: false })),
  // FL 493: no video call integration is offered, so no Webex token either.
  statePart("has_webex_token", ["video_calls", "has_webex_token"], () => ({ has_webex_token: false })),
  // No GIPHY key is configured (Zulip sends "" then, and clients hide the GIF picker).
  statePart("giphy_api_key", ["giphy"], () => ({ giphy_api_key: "" })),
  unreadMsgsPart,
  recentPrivateConversationsPart,
  starredMessagesPart,
  realmIncomingWebhookBotsPart,
  devicesPart,
];
