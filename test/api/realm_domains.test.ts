import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("allowed email domains", () => {
  test("owners add, change and remove; everyone reads them and gets the events", async () => {
    let added: any;
    const r = await verifyAction(
      s,
      async () => {
        added = expectSuccess(await s.as("desdemona").post("/realm/domains", { domain: "Zulip.ORG", allow_subdomains: false }));
      },
      { viewers: ["desdemona", "hamlet", "polonius"] },
    );
    expect(added.new_domain).toEqual([expect.any(Number), "zulip.org"]);
    for (const types of Object.values(r.types)) expect(types).toEqual(["realm_domains/add"]);
    await verifyAction(s, () => s.as("desdemona").patch("/realm/domains/zulip.org", { allow_subdomains: true }), { viewers: ["hamlet"] });
    expect(expectSuccess(await s.as("hamlet").get("/realm/domains")).domains).toEqual([{ domain: "zulip.org", allow_subdomains: true }]);
    await verifyAction(s, () => s.as("desdemona").delete("/realm/domains/zulip.org"), { viewers: ["hamlet"] });
    expect(expectSuccess(await s.as("hamlet").get("/realm/domains")).domains).toEqual([]);
  });

  test("errors", async () => {
    expectError(await s.as("iago").post("/realm/domains", { domain: "x.org", allow_subdomains: false }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await s.as("desdemona").post("/realm/domains", { domain: "not a domain", allow_subdomains: false }), 400, "BAD_REQUEST", "Invalid domain: not a domain");
    const tooLong = `${"a".repeat(60)}.`.repeat(40) + "example";
    expectError(await s.as("desdemona").post("/realm/domains", { domain: tooLong, allow_subdomains: false }), 400, "BAD_REQUEST", `Invalid domain: ${tooLong}`);
    expectError(await s.as("desdemona").post("/realm/domains", { domain: "x.org" }), 400, "REQUEST_VARIABLE_MISSING");
    expectSuccess(await s.as("desdemona").post("/realm/domains", { domain: "x.org", allow_subdomains: false }));
    expectError(await s.as("desdemona").post("/realm/domains", { domain: "X.org", allow_subdomains: true }), 400, "BAD_REQUEST", "The domain x.org is already a part of your organization.");
    expectError(await s.as("desdemona").patch("/realm/domains/y.org", { allow_subdomains: true }), 400, "BAD_REQUEST", "No entry found for domain y.org.");
    expectError(await s.as("desdemona").delete("/realm/domains/y.org"), 400, "BAD_REQUEST");
  });
});
