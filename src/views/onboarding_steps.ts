import type { Store } from "../store/db";
import type { OnboardingStepJson } from "../schemas/register";
import { hasSeenOnboardingStep } from "../store/onboarding_steps";

/**
 * Zulip's onboarding steps (zerver/lib/onboarding_steps.py): one-time notices and
 * actions a client shows a new user once. Clients mark each seen; register's
 * `onboarding_steps` lists the ones left. Zulip's navigation tour video counts as seen
 * when the server has no video to show, as here.
 */
const ONE_TIME_NOTICES = [
  "visibility_policy_banner",
  "intro_inbox_view_modal",
  "intro_recent_view_modal",
  "first_stream_created_banner",
  "jump_to_conversation_banner",
  "non_interleaved_view_messages_fading",
  "interleaved_view_messages_fading",
  "intro_resolve_topic",
  "navigation_tour_video",
];
const ONE_TIME_ACTIONS = ["narrow_to_dm_with_welcome_bot_new_user"];
const WITHOUT_VIDEO = new Set(["navigation_tour_video"]);

export function isOnboardingStep(name: string): boolean {
  return ONE_TIME_NOTICES.includes(name) || ONE_TIME_ACTIONS.includes(name);
}

export function nextOnboardingSteps(store: Store, userId: number): OnboardingStepJson[] {
  const seen = (name: string) => WITHOUT_VIDEO.has(name) || hasSeenOnboardingStep(store, userId, name);
  return [
    ...ONE_TIME_NOTICES.filter((name) => !seen(name)).map((name) => ({ type: "one_time_notice" as const, name })),
    ...ONE_TIME_ACTIONS.filter((name) => !seen(name)).map((name) => ({ type: "one_time_action" as const, name })),
  ];
}
