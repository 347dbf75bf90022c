import { describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer } from "../kit";
import { register } from "../kit/events";
import { runRealmDeletionIfDue } from "../../src/actions/realm";
import { getRealm, putRealm } from "../../src/store/realm";
import { getUser } from "../../src/store/users";
import { hearth } from "../kit/process";

describe("POST /realm/deactivate", () => {
  test("owners only; bounds from register; everyone is logged out and told", async () => {
    const s = await startTestServer();
    try {
      const bounds = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["realm"] }));
      expect(bounds.server_min_deactivated_realm_deletion_days).toBe(14);
      expect(bounds.server_max_deactivated_realm_deletion_days).toBeNull();
      expectError(await s.as("iago").post("/realm/deactivate"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
      expectError(await s.as("desdemona").post("/realm/deactivate", { deletion_delay_days: 3 }), 400, "BAD_REQUEST");
      expectError(await s.as("desdemona").post("/realm/deactivate", { deletion_delay_days: "soon" }), 400, "BAD_REQUEST");
      const hamlet = await register(s.as("hamlet"));
      expectSuccess(await s.as("desdemona").post("/realm/deactivate", { deletion_delay_days: 30 }));
      expectError(await s.as("hamlet").get("/users/me"), 401, "REALM_DEACTIVATED");
      // Zulip's server_settings reads no credentials: a deactivated organization's members get the public answer.
      expect(expectSuccess(await s.as("hamlet").get("/server_settings")).realm_name).toBe("Zulip Dev");
      expectError(await s.as("hamlet").get("/events", { queue_id: hamlet.queue_id, last_event_id: -1, dont_block: true }), 401, "REALM_DEACTIVATED");
      const realm = getRealm(s.server.h.store)!;
      expect(realm.deactivated).toBe(true);
      expect(realm.scheduled_deletion_date! - Date.now() / 1000).toBeGreaterThan(29 * 86400);
    } finally {
      await s.stop();
    }
  });

  test("the realm event reaches every user's queue", async () => {
    const s = await startTestServer();
    try {
      const published: any[] = [];
      s.server.h.events.attach({ deliver: (event, userIds) => published.push({ event, userIds }) });
      expectSuccess(await s.as("desdemona").post("/realm/deactivate"));
      const realmEvent = published.find((p) => p.event.type === "realm");
      expect(realmEvent.event).toEqual({ type: "realm", op: "deactivated", realm_id: 1 });
      expect(realmEvent.userIds).toContain(s.users.othello.id);
      expect(getRealm(s.server.h.store)!.scheduled_deletion_date).toBeNull();
    } finally {
      await s.stop();
    }
  });

  test("data is deleted once the date passes, and then cannot be reactivated", async () => {
    const s = await startTestServer();
    const h = s.server.h;
    try {
      expectSuccess(await s.as("desdemona").post("/realm/deactivate", { deletion_delay_days: 14 }));
      expect(await runRealmDeletionIfDue(h.store)).toBe(false);
      const realm = getRealm(h.store)!;
      await h.store.commit(() => putRealm(h.store, { ...realm, scheduled_deletion_date: Math.floor(Date.now() / 1000) - 1 }));
      expect(await runRealmDeletionIfDue(h.store)).toBe(true);
      expect(getUser(h.store, s.users.hamlet.id)).toBeUndefined();
      expect(getRealm(h.store)!.data_deleted).toBe(true);
      await s.server.stop(); // keeps the folder for the command below
      const res = await hearth(["reactivate-realm", "--data", s.dataDir]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("cannot be reactivated");
    } finally {
      await s.stop();
    }
  });

  test("reactivate-realm brings a deactivated organization back before its deletion", async () => {
    const s = await startTestServer();
    try {
      expectSuccess(await s.as("desdemona").post("/realm/deactivate", { deletion_delay_days: 20 }));
      await s.server.stop();
      const res = await hearth(["reactivate-realm", "--data", s.dataDir]);
      expect(res.code).toBe(0);
      const again = await startTestServer({ dataDir: s.dataDir });
      try {
        expectSuccess(await again.as(s.users.hamlet).get("/users/me"));
        expect(getRealm(again.server.h.store)!.scheduled_deletion_date).toBeNull();
      } finally {
        await again.stop();
      }
    } finally {
      await s.stop();
    }
  });
});
