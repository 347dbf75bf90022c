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
  /** "realm" → Realm; ["counter", name] → last allocated ID; "avatar_salt" → secret string */
  meta: "meta",
  /** userId → UserRecord */
  users: "users",
  /** lower-cased delivery email → userId */
  usersByEmail: "users_by_email",
  /** userId → PresenceRecord (src/store/presence.ts) */
  presence: "presence",
  /** userId → string[] (the user's alert words, in the order added) */
  alertWords: "alert_words",
  /** [userId, mutedUserId] → unix seconds when muted */
  mutedUsers: "muted_users",
  /** inviteId → InviteRecord (src/store/invites.ts): reusable invitation links */
  invites: "invites",
  /** an invitation link's secret key → inviteId */
  inviteKeys: "invite_keys",
  /** emailId → OutboxEmail (src/store/outbox.ts): an email to send, written with the action that causes it, removed once the SMTP server accepted it */
  outbox: "outbox",
  /** [userId, snippetId] → SavedSnippet */
  savedSnippets: "saved_snippets",
  /** [userId, onboarding step name] → unix seconds when the user marked it seen */
  onboardingSteps: "onboarding_steps",
  /** [userId, "apns" | "fcm", sha256(token)] → { token, appid, registered } (push delivery is off; tokens are kept for when it exists) */
  pushDevices: "push_devices",
  /** [userId, deviceId] → ClientDevice (src/store/client_devices.ts): a logged-in device (FL 468), with its E2EE push registration */
  clientDevices: "client_devices",
  /** [userId, key] → value: a bot's key-value storage (Zulip's BotStorageData) */
  botStorage: "bot_storage",
  /** [messageId, botId] → "mention" | "direct_message": an outgoing-webhook call not yet made (src/actions/outgoing_webhooks.ts) */
  outgoingWebhookCalls: "outgoing_webhook_calls",
  /** playgroundId → RealmPlayground (code playgrounds for code blocks) */
  realmPlaygrounds: "realm_playgrounds",
  /** emojiId → RealmEmoji (deactivated ones kept: old messages still show them) */
  realmEmoji: "realm_emoji",
  /** emojiId → Uint8Array: the emoji's image, apart so listing and rendering never read it */
  realmEmojiImages: "realm_emoji_images",
  /** folderId → ChannelFolder (archived ones kept) */
  channelFolders: "channel_folders",
  /** groupId → DefaultChannelGroup (src/store/default_channel_groups.ts) */
  defaultChannelGroups: "default_channel_groups",
  /** domain (lower-cased) → RealmDomain: allowed email domains for new users */
  realmDomains: "realm_domains",
  /** [userId, fragment] → NavigationView (built-in views only once the user changed them) */
  navigationViews: "navigation_views",
  /** [userId, draftId] → Draft */
  drafts: "drafts",
  /** [userId, channelId, topicKey] → UserTopic (a topic's visibility policy for one user) */
  userTopics: "user_topics",
  /** fieldId → CustomProfileField */
  profileFields: "profile_fields",
  /** [userId, fieldId] → ProfileValue: `value` text (a JSON list of user IDs for Users fields), `rendered_value` for text fields */
  profileData: "profile_data",
  /** userId → UploadedAvatar (absent: the generated default avatar) */
  avatars: "avatars",
  /** userId → UserStatus (absent: no status) */
  userStatus: "user_status",
  /** channelId → ChannelRecord (archived channels included, `is_archived` set) */
  channels: "channels",
  /** lower-cased channel name → channelId (names stay taken while archived) */
  channelsByName: "channels_by_name",
  /** [channelId, userId] → SubscriptionRecord (kept with `active: false` after unsubscribing, for `unsubscribed` and the color) */
  subscriptions: "subscriptions",
  /** [userId, channelId] → active (boolean); mirror of `subscriptions` for "channels of a user" */
  userSubscriptions: "user_subscriptions",
  /** channelId → true: the realm's default channels for new users */
  defaultChannels: "default_channels",
  /** groupId → UserGroupRecord (system groups `role:*` included) */
  userGroups: "user_groups",
  /** lower-cased group name → groupId */
  userGroupsByName: "user_groups_by_name",
  /** [groupId, userId] → true: direct members of user-defined groups (system groups derive theirs from roles) */
  userGroupMembers: "user_group_members",

  // Messages (Zulip's Message + UserMessage split: content once, flags per user).
  /** messageId → MessageRecord (content, rendered HTML, reactions, edit history; stored once) */
  messages: "messages",
  /**
   * [userId, messageId] → flags bitmask (see MessageFlag): the user received the
   * message. Flags 0 (unread, nothing else) are not written here: the "unread" row
   * of `userMessageIndex` already says so (see getUserFlags).
   */
  userMessages: "user_messages",
  /**
   * messageId → the sorted IDs of the users holding a flags row (edits, reactions,
   * moves, deletion), or the ID of a shared list holding them (`sharedRecipientLists`);
   * past the unread watermark it also stands for the "unread" rows not yet written
   * (see src/store/messages.ts)
   */
  messageRecipientLists: "message_recipient_lists",
  /**
   * listId → sorted user IDs: a recipient list shared by the messages whose
   * `messageRecipientLists` value is that ID (a number) instead of the IDs. Written
   * once, never changed (src/store/shared_recipient_lists.ts)
   */
  sharedRecipientLists: "shared_recipient_lists",
  /** [userId, index, messageId] → location ([channelId, topic] or DM conversation key) for index "unread" and "dm"; true for "starred", "mentioned", "alerted". "unread" rows of recent channel messages may be implicit, and the background job writes channel messages' "unread" rows as runs, [userId, "unreadBatch", batchStart] → the IDs (varint distances, src/store/unread_runs.ts) and [userId, "unreadBatchPlaces", batchStart] → their locations (see src/store/messages.ts). */
  userMessageIndex: "user_message_index",
  /** [channelId, messageId] → true */
  channelMessages: "channel_messages",
  /** [channelId, topicKey, messageId] → true; topicKey is the lower-cased topic */
  topicMessages: "topic_messages",
  /** [channelId, topicKey] → { name, max_id } (topic list; name keeps the newest spelling) */
  topics: "topics",
  /** [conversationKey, messageId] → true; conversationKey is the sorted member IDs, "3,7,9" */
  dmMessages: "dm_messages",
  /** [senderId, messageId] → true */
  senderMessages: "sender_messages",
  /** [term, messageId] → true; terms are lower-cased words of content and topic (word and prefix search are range scans). Written by the background job up to meta ["searchTermsWrittenUpTo"]; newer messages have none yet (src/store/search_terms.ts) */
  searchTerms: "search_terms",
  /** recipient key ("c:<channelId>" | "d:<conversationKey>") → recipient_id */
  recipients: "recipients",

  // Scheduled messages and reminders (one ID sequence, as Zulip's ScheduledMessage table).
  /** [ownerId, scheduledId] → ScheduledRecord (src/store/scheduled_messages.ts); delivered ones kept with delivered_message_id */
  scheduledMessages: "scheduled_messages",
  /** [deliverAt, scheduledId] → ownerId: the delivery queue, only items still to attempt (not delivered, not failed) */
  scheduledDue: "scheduled_due",
  // Uploaded files (Zulip's Attachment): bytes on disk under `<data>/uploads/<path_id>`, metadata here.
  /** attachmentId → AttachmentRecord (src/store/uploads.ts), `message_ids` listing the messages that link it */
  attachments: "attachments",
  /** path_id → attachmentId */
  attachmentsByPath: "attachments_by_path",
  /** [ownerId, attachmentId] → true */
  userAttachments: "user_attachments",
  /** [messageId, attachmentId] → true; mirror of `message_ids`, for deleting and editing messages */
  messageAttachments: "message_attachments",
  /** uploadId → TusUpload: a resumable upload in progress; its bytes so far are `<data>/uploads/partial/<uploadId>` */
  tusUploads: "tus_uploads",
  // Browser sign-in sessions (src/store/sessions.ts): the cookie's secret is never stored, only its SHA-256.
  /** [userId, publicId] → SessionRecord */
  sessions: "sessions",
  /** sha256(session secret), hex → [userId, publicId] */
  sessionsByHash: "sessions_by_hash",

  // Emails the server sends on its own (src/store/account_emails.ts).
  /** [userId, messageId] → PendingMissedMessage (src/store/account_emails.ts): a message to tell an offline user of by email, until its batch is due */
  missedMessageEmails: "missed_message_emails",
  /** [due (unix ms), userId] → true: when a user's batch of missed-message emails is due (one row per user with pending messages) */
  missedMessageEmailsDue: "missed_message_emails_due",
  /** [userId, client key (hash of the User-Agent)] → unix seconds first seen: password logins' clients, for the new-login notice */
  loginClients: "login_clients",
  /** userId → PendingEmailChange: an address change waiting for its confirmation link */
  emailChanges: "email_changes",
} as const;

export type KeyspaceName = keyof typeof KEYSPACES;
