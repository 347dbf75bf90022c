// zulip-js ships no types; tests use it as a real client.
declare module "zulip-js";
