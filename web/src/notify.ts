export type Permission = NotificationPermission | "unsupported";
export const notificationPermission = (): Permission => ("Notification" in window ? Notification.permission : "unsupported");
export async function requestNotifications(): Promise<Permission> {
  if (!("Notification" in window)) return "unsupported";
  return Notification.requestPermission();
}
