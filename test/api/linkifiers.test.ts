import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as t } from "@sinclair/typebox";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, drainEvents, verifyAction } from "../kit/events";
import { success } from "../../src/schemas/common";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const Linkifier = t.Object({
  id: t.Integer(),
  pattern: t.String(),
  url_template: t.String(),
  example_input: t.Union([t.String(), t.Null()]),
  reverse_template: t.Union([t.String(), t.Null()]),
  alternative_url_templates: t.Array(t.String()),
});
const withTemplates = { registerParams: { client_capabilities: { linkifier_url_template: true } } };

describe("linkifiers", () => {
  test("administrators add, edit, reorder and remove; clients with linkifier_url_template follow along", async () => {
    let first = 0;
    const r = await verifyAction(
      s,
      async () => {
        first = expectSuccess(await s.as("iago").post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/issues/{id}" })).id;
      },
      { ...withTemplates, viewers: ["iago", "hamlet"] },
    );
    expect(r.types.hamlet).toEqual(["realm_linkifiers"]);
    const second = expectSuccess(
      await s.as("iago").post("/realm/filters", { pattern: "RT-(?P<ticket>\\d+)", url_template: "https://rt.example.com/{ticket}", example_input: "RT-1", reverse_template: "RT-{ticket}" }),
    ).id;
    const list = expectSuccess(await s.as("hamlet").get("/realm/linkifiers"));
    expectSchema(success({ linkifiers: t.Array(Linkifier) }), list);
    expect(list.linkifiers.map((l: any) => l.id)).toEqual([first, second]);
    await verifyAction(s, () => s.as("iago").patch("/realm/linkifiers", { ordered_linkifier_ids: [second, first] }), { ...withTemplates, viewers: ["hamlet"] });
    expect(expectSuccess(await s.as("hamlet").get("/realm/linkifiers")).linkifiers.map((l: any) => l.id)).toEqual([second, first]);
    await verifyAction(
      s,
      () => s.as("iago").patch(`/realm/filters/${first}`, { pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/pull/{id}" }),
      { ...withTemplates, viewers: ["hamlet"] },
    );
    await verifyAction(s, () => s.as("iago").delete(`/realm/filters/${second}`), { ...withTemplates, viewers: ["hamlet"] });
    expect(expectSuccess(await s.as("hamlet").get("/realm/linkifiers")).linkifiers).toEqual([
      { id: first, pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/pull/{id}", example_input: null, reverse_template: null, alternative_url_templates: [] },
    ]);
  });

  test("clients without linkifier_url_template get neither linkifiers nor their events", async () => {
    const state = await register(s.as("othello"), { client_capabilities: {} });
    expect(state.realm_linkifiers).toEqual([]);
    expectSuccess(await s.as("iago").post("/realm/filters", { pattern: "JIRA-(?P<n>\\d+)", url_template: "https://jira.example.com/{n}" }));
    expect((await drainEvents(s.as("othello"), state.queue_id)).map((e) => e.type)).not.toContain("realm_linkifiers");
  });

  test("validation", async () => {
    expectError(await s.as("hamlet").post("/realm/filters", { pattern: "a(?P<x>b)", url_template: "https://x.test/{x}" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").post("/realm/filters", { pattern: "a(?P<x>b", url_template: "https://x.test/{x}" }), 400, "BAD_REQUEST");
    expectError(
      await s.as("iago").post("/realm/filters", { pattern: "a(?P<x>b)", url_template: "https://x.test/{y}" }),
      400,
      "BAD_REQUEST",
      "Group variables in URL template must match the named groups in the pattern.",
    );
    expectError(await s.as("iago").post("/realm/filters", { pattern: "a(?P<x>b)", url_template: "javascript:alert({x})" }), 400, "BAD_REQUEST", "Enter a valid URL.");
    expectError(await s.as("iago").patch("/realm/filters/9999", { pattern: "a(?P<x>b)", url_template: "https://x.test/{x}" }), 400, "BAD_REQUEST", "Linkifier not found.");
    expectError(await s.as("iago").patch("/realm/linkifiers", { ordered_linkifier_ids: [] }), 400, "BAD_REQUEST");
  });
});

describe("code playgrounds", () => {
  test("administrators add and remove them; everyone gets realm_playgrounds", async () => {
    let id = 0;
    const r = await verifyAction(
      s,
      async () => {
        id = expectSuccess(await s.as("iago").post("/realm/playgrounds", { name: "Python playground", pygments_language: "Python", url_template: "https://python.example.com?code={code}" })).id;
      },
      { viewers: ["iago", "hamlet"] },
    );
    expect(r.types.hamlet).toEqual(["realm_playgrounds"]);
    expect(r.events.hamlet[0].realm_playgrounds).toEqual([{ id, name: "Python playground", pygments_language: "Python", url_template: "https://python.example.com?code={code}" }]);
    expectError(await s.as("hamlet").post("/realm/playgrounds", { name: "X", pygments_language: "Python", url_template: "https://x.test/{code}" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").post("/realm/playgrounds", { name: "X", pygments_language: "Python", url_template: "https://x.test/{x}" }), 400, "BAD_REQUEST", '"code" should be the only variable present in the URL template');
    expectError(await s.as("iago").post("/realm/playgrounds", { name: "Python playground", pygments_language: "Python", url_template: "https://y.test/{code}" }), 400, "BAD_REQUEST");
    await verifyAction(s, () => s.as("iago").delete(`/realm/playgrounds/${id}`), { viewers: ["hamlet"] });
    expectError(await s.as("iago").delete(`/realm/playgrounds/${id}`), 400, "BAD_REQUEST", "Invalid playground");
  });
});
