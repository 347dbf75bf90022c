import type { ClientCapabilities } from "./capabilities";
import type { ApiEvent } from "./hub";

/**
 * What a client gets in place of one event, per the capabilities it declared at
 * register: the event itself, another form of it, several events, or none (null).
 * The one hook by which capabilities shape events: SHAPERS below, one rule per event
 * type, so no queue code knows about any capability. Where the other form is one only
 * the publisher can build (a deactivated group's `remove`, a single emoji's change),
 * the publisher puts it in the event beside the main form (`without_deactivated_groups`,
 * `individual`), and the rule of its type picks one per queue.
 */
export type CapabilityShaper = (event: ApiEvent, caps: ClientCapabilities, realm: ShapingRealm) => ApiEvent | ApiEvent[] | null;

/** The realm facts a shaper may read, each only when an event needs it. */
export interface ShapingRealm {
  /** The realm's display name for the empty topic (costs a realm read). */
  emptyTopicDisplayName(): string;
}

/**
 * Per event type, applied in each queue after its event-type and narrow filters (a
 * narrow judges the stored topic, not the name a client is shown) and after the
 * message's content form is chosen.
 */
const SHAPERS: Readonly<Record<string, CapabilityShaper>> = {
  // Stream typing notifications only for clients that declared they handle them.
  typing: (event, caps, realm) => (event.message_type === "stream" && !caps.stream_typing_notifications ? null : withTopicNames(event, caps, realm)),
  // Without linkifier_url_template a client gets neither linkifiers nor their events.
  realm_linkifiers: (event, caps) => (caps.linkifier_url_template ? event : null),
  delete_message: (event, caps, realm) => {
    if (!Array.isArray(event.message_ids) || caps.bulk_message_deletion) return withTopicNames(event, caps, realm);
    const { message_ids, ...rest } = event;
    return (message_ids as number[]).map((id) => withTopicNames({ ...rest, message_id: id }, caps, realm));
  },
  presence: (event, caps) => {
    if (!("presences" in event)) return event;
    // Publishers give both forms; each client gets the one it asked for (FL 419).
    const { presences, legacy, ...rest } = event as any;
    return caps.simplified_presence_events ? { ...rest, presences } : { ...rest, ...legacy };
  },
  subscription: (event, caps) => {
    const kept = onlyForArchivedChannelClients(event, caps);
    if (kept === null) return null;
    event = kept;
    // A channel's unarchiving (FL 388): only clients that forgot the channel need its subscription again.
    if ("only_without_archived_channels" in event) {
      if (caps.archived_channels) return null;
      const { only_without_archived_channels: _, ...rest } = event;
      event = rest as ApiEvent;
    }
    if (event.op !== "add" || !("resolved_subscriptions" in event)) return event;
    // Publishers give both forms: clients without notification_settings_null get the
    // user's defaults in place of null per-channel notification settings.
    const { resolved_subscriptions, ...rest } = event;
    return caps.notification_settings_null ? rest : { ...rest, subscriptions: resolved_subscriptions };
  },
  stream: (event, caps) => {
    const kept = onlyForArchivedChannelClients(event, caps);
    if (kept === null) return null;
    event = kept;
    if (!("archived_update" in event)) return event;
    // FL 315: clients with archived_channels keep archived channels and get an update instead
    // of the delete at archiving, and of the create at unarchiving (FL 388).
    const { archived_update, ...rest } = event;
    return caps.archived_channels ? (archived_update as ApiEvent) : rest;
  },
  realm_emoji: (event, caps) => {
    if (!("individual" in event)) return event;
    // FL 491: one emoji's change alone, or the whole dictionary for older clients.
    const { individual, ...whole } = event;
    return caps.individual_emoji_changes ? (individual as ApiEvent) : whole;
  },
  user_group: (event, caps) => {
    if (!("without_deactivated_groups" in event)) return event;
    // Clients without include_deactivated_groups do not know deactivated groups: they
    // get the form the publisher gave for them (a `remove`, an `add`) or nothing.
    const { without_deactivated_groups, ...rest } = event;
    return caps.include_deactivated_groups ? rest : ((without_deactivated_groups as ApiEvent | null) ?? null);
  },
  message: withTopicNames,
  update_message: withTopicNames,
  user_topic: withTopicNames,
  update_message_flags: withTopicNames,
};

/**
 * Changes to an archived channel (its subscribers, its settings: FL 362) are marked
 * `only_with_archived_channels` by their publisher: a client without the
 * `archived_channels` capability was told the channel is gone (a `stream` delete at
 * archiving) and keeps no trace of it, so it gets none of them.
 */
function onlyForArchivedChannelClients(event: ApiEvent, caps: ClientCapabilities): ApiEvent | null {
  if (!("only_with_archived_channels" in event)) return event;
  if (!caps.archived_channels) return null;
  const { only_with_archived_channels: _, ...rest } = event;
  return rest as ApiEvent;
}

/** The events a queue with `caps` gets for `event`, in order (see SHAPERS). */
export function shapeForClient(event: ApiEvent, caps: ClientCapabilities, realm: ShapingRealm): ApiEvent[] {
  const shaper = SHAPERS[event.type];
  if (!shaper) return [event];
  const shaped = shaper(event, caps, realm);
  return shaped === null ? [] : Array.isArray(shaped) ? shaped : [shaped];
}

/** FL 334: clients without empty_topic_name see the realm's display name for "". */
function withTopicNames(event: ApiEvent, caps: ClientCapabilities, realm: ShapingRealm): ApiEvent {
  if (caps.empty_topic_name) return event;
  const name = () => realm.emptyTopicDisplayName();
  switch (event.type) {
    case "message": {
      const message = event.message as Record<string, unknown> | undefined;
      if (message && message.type === "stream" && message.subject === "") {
        return { ...event, message: { ...message, subject: name() } };
      }
      return event;
    }
    case "update_message":
    case "delete_message":
    case "typing": {
      let changed: ApiEvent | null = null;
      for (const key of ["topic", "subject", "orig_subject"]) {
        if (event[key] === "") (changed ??= { ...event })[key] = name();
      }
      return changed ?? event;
    }
    case "user_topic":
      return event.topic_name === "" ? { ...event, topic_name: name() } : event;
    case "update_message_flags": {
      // Marking messages unread tells where they are: `message_details[id].topic`.
      const details = event.message_details as Record<string, { topic?: string }> | undefined;
      if (!details || !Object.values(details).some((d) => d.topic === "")) return event;
      const shown: Record<string, unknown> = {};
      for (const [id, d] of Object.entries(details)) shown[id] = d.topic === "" ? { ...d, topic: name() } : d;
      return { ...event, message_details: shown };
    }
    default:
      return event;
  }
}
