/** Store records for tests that write the store directly, below the actions. */
import type { MessageRecord } from "../../src/store/messages";

type MessageFields = Pick<MessageRecord, "id" | "sender_id" | "type" | "channel_id" | "topic" | "dm_user_ids" | "recipient_id" | "content" | "rendered_content" | "timestamp">;

/** A message as sending one stores it: the given fields, plain for everything else (no links, reactions or edits). */
export function messageRecord(fields: MessageFields): MessageRecord {
  return {
    ...fields,
    client: "test",
    is_me_message: false,
    has_link: false,
    has_image: false,
    has_attachment: false,
    reactions: [],
    submessages: [],
    edit_history: [],
    last_edit_timestamp: null,
    last_moved_timestamp: null,
  } as MessageRecord;
}

/** A plain channel message from user 1 (channel 5, topic "t" unless given), for tests of the rows a message holds. */
export function channelMessageRecord(id: number, channelId = 5, topic = "t"): MessageRecord {
  return messageRecord({ id, sender_id: 1, type: "stream", channel_id: channelId, topic, dm_user_ids: null, recipient_id: 9, content: `message ${id}`, rendered_content: `<p>message ${id}</p>`, timestamp: 1 });
}
