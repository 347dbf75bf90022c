import type { Store } from "./db";

/** Whether the user marked this onboarding step seen. */
export function hasSeenOnboardingStep(store: Store, userId: number, step: string): boolean {
  return store.dbs.onboardingSteps.doesExist([userId, step]);
}

/** Records when the user first marked the step seen (a later mark keeps that time); call inside `commit`. */
export function markOnboardingStepSeen(store: Store, userId: number, step: string, seconds: number): void {
  if (!hasSeenOnboardingStep(store, userId, step)) store.dbs.onboardingSteps.put([userId, step], seconds);
}
