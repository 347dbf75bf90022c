import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { statePart } from "./state_parts";
import { getChannel, type ChannelRecord } from "../store/channels";
import { allDefaultChannelGroups, type DefaultChannelGroup } from "../store/default_channel_groups";
import { isGuest } from "../store/users";

/** A group as the API shows it. */
export interface DefaultChannelGroupView {
  name: string;
  id: number;
  description: string;
  streams: number[];
}

/** The API form: `streams` are the live channels' IDs in channel-name order (IDs since FL 330), groups sorted by name. */
export function defaultChannelGroupsView(h: Hearth): DefaultChannelGroupView[] {
  return allDefaultChannelGroups(h.store)
    .sort(byName)
    .map((group) => ({
      name: group.name,
      id: group.id,
      description: group.description,
      streams: liveChannels(h, group).sort(byName).map((c) => c.id),
    }));
}

/** Zulip orders groups, and channels in a group, by name (code-point order, as its database does). */
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A group's channels that still exist and are not archived. */
function liveChannels(h: Hearth, group: DefaultChannelGroup): ChannelRecord[] {
  return group.channel_ids.map((id) => getChannel(h.store, id)).filter((c): c is ChannelRecord => c !== undefined && !c.is_archived);
}

/**
 * Zulip's lookup_default_stream_groups, for the join page: the live channels of the
 * groups a joining person picked, by name; an unknown name is refused.
 */
export function channelsOfDefaultChannelGroups(h: Hearth, names: readonly string[]): number[] {
  const groups = allDefaultChannelGroups(h.store);
  const ids = new Set<number>();
  for (const name of names) {
    const group = groups.find((g) => g.name === name);
    if (!group) throw badRequest(`Invalid default channel group ${name}`);
    for (const channel of liveChannels(h, group)) ids.add(channel.id);
  }
  return [...ids];
}

export const realmDefaultStreamGroupsPart = statePart("realm_default_stream_groups", ["default_stream_groups"], ({ h, user }) => ({
  // Zulip shows guests none (they are not sent the events either).
  realm_default_stream_groups: user && !isGuest(user) ? defaultChannelGroupsView(h) : [],
}));
