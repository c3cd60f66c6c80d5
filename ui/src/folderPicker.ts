// The system's file dialogs (Tauri's dialog plugin): the add-project form's folder picker, and
// where the cluster key for workers is saved. The end-to-end test cannot drive a native dialog,
// so it sets what the dialog would return.
import { open, save } from "@tauri-apps/plugin-dialog";

type TestHook = { pickFolder?: string; saveKeyAs?: string };

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

/** Where the person chose to save the cluster key for workers, or null when they closed the dialog. */
export async function pickKeyFile(): Promise<string | null> {
  const hook = window.__HEALER_E2E__?.saveKeyAs;
  if (hook) return hook;
  const chosen = await save({ title: "Save the cluster key for workers", defaultPath: "healer-cluster.key" });
  return typeof chosen === "string" ? chosen : null;
}
