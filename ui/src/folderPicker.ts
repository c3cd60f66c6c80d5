// The add-project form's folder picker: the system's folder dialog (Tauri's dialog plugin). The
// end-to-end test cannot drive a native dialog, so it sets the folder the dialog would return.
import { open } from "@tauri-apps/plugin-dialog";

type TestHook = { pickFolder?: string };

declare global {
  interface Window {
    /** Set by the end-to-end test only: the folder "chosen" instead of opening the dialog. */
    __HEALER_E2E__?: TestHook;
  }
}

/** The folder the person chose, or null when they closed the dialog. */
export async function pickFolder(): Promise<string | null> {
  const hook = window.__HEALER_E2E__?.pickFolder;
  if (hook) return hook;
  const chosen = await open({ directory: true, multiple: false, title: "Choose the project's folder" });
  return typeof chosen === "string" ? chosen : null;
}
