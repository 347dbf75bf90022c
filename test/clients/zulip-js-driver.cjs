// Runs zulip-js under Node, as its users do (under Bun its Node-only form-data
// bodies are sent as "[object FormData]"). Input (argv[2], JSON):
//   { "config": { realm, username, apiKey | password | zuliprc },
//     "calls": [ { "fn": "users.me.getProfile", "args": [ ... ] }, ... ] }
// Output (stdout, JSON): { "apiKey": <key the client ended with>, "results": [ ... ] }
const zulipInit = require("zulip-js");

async function main() {
  const { config, calls } = JSON.parse(process.argv[2]);
  const client = await zulipInit(config);
  const results = [];
  for (const { fn, args = [] } of calls) {
    const path = fn.split(".");
    let target = client;
    for (const part of path.slice(0, -1)) target = target[part];
    results.push(await target[path[path.length - 1]](...args));
  }
  process.stdout.write(JSON.stringify({ apiKey: client.config.apiKey, results }));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
