/**
 * Events about an archived channel (FL 362: it still takes subscribers and setting
 * changes). Clients with the `archived_channels` capability keep archived channels and
 * get them as for any channel; the others were told the channel is gone and get
 * nothing, as if it had been deleted (src/events/shaping.ts drops them per queue).
 */
import type { ChannelRecord } from "../store/channels";
import type { EventOf, SubscriptionAddBothForms, TypedEvent } from "../schemas/events";

type ChannelEvent = EventOf<"stream"> | EventOf<"subscription"> | SubscriptionAddBothForms;

/** `event` as published about `channel`: marked for archived_channels clients only while the channel is archived. */
export function aboutChannel(channel: Pick<ChannelRecord, "is_archived">, event: ChannelEvent): TypedEvent {
  return channel.is_archived ? { ...event, only_with_archived_channels: true as const } : event;
}
