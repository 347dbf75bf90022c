// Runs zulip-js under Node, as its users do: its POST bodies are built with the
// `form-data` package, which only Node's fetch polyfill serialises. Prints one JSON
// object with every response, for test/api/channels.test.ts to check.
const zulipInit = require("zulip-js");

(async () => {
  const { HEARTH_URL: realm, HEARTH_EMAIL: username, HEARTH_API_KEY: apiKey, CHANNEL_NAME: name } = process.env;
  const client = await zulipInit({ username, apiKey, realm });
  const out = {};
  out.added = await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name, description: "made by zulip-js" }]) });
  out.streams = await client.streams.retrieve();
  out.subscriptions = await client.streams.subscriptions.retrieve();
  out.streamId = await client.streams.getStreamId(name);
  out.removed = await client.users.me.subscriptions.remove({ subscriptions: JSON.stringify([name]) });
  out.archived = await client.streams.deleteById({ stream_id: out.streamId.stream_id });
  process.stdout.write(JSON.stringify(out));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
