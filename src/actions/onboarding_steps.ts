import type { Hearth } from "../context";
import { badRequest, botRequestRefused } from "../errors";
import type { UserRecord } from "../store/users";
import { markOnboardingStepSeen } from "../store/onboarding_steps";
import { commit } from "../events/commit";
import { isOnboardingStep, nextOnboardingSteps } from "../views/onboarding_steps";

/** `POST /users/me/onboarding_steps`: marks one step seen; the user's clients get the steps left. */
export async function doMarkOnboardingStepSeen(h: Hearth, user: UserRecord, step: string): Promise<void> {
  // Zulip's @human_users_only.
  if (user.is_bot) throw botRequestRefused();
  if (!isOnboardingStep(step)) throw badRequest(`Unknown onboarding_step: ${step}`);
  await commit(h, (tx) => {
    markOnboardingStepSeen(h.store, user.id, step, Math.floor(Date.now() / 1000));
    tx.notify({ type: "onboarding_steps", onboarding_steps: nextOnboardingSteps(h.store, user.id) }, [user.id]);
  });
}
