/** The one way the client's forms run a server call: busy while it runs, the server's words if it fails. */
import { useState } from "preact/hooks";
import { errorText } from "./api";

/** A form's submit, with its own busy state and the server's words beside it. */
export function useAction(): [string, boolean, (run: () => Promise<unknown>) => Promise<boolean>] {
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError("");
    try {
      await action();
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return [error, busy, run];
}
