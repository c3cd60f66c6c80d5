// The fake shell's desktop side (src-tauri/src/desktop.rs, window.rs): the background and
// login settings, the view a new window opens at, and quitting.
import type { DesktopSettings, SavedView } from "../bindings";

export class FakeDesktop {
  settings: DesktopSettings = { keep_running: true, start_at_login: false, tray: true };
  /** What the window last said about where the person is. */
  remembered: SavedView | null = null;
  /** What a new window is told at its start (taken once). */
  restore: SavedView | null = null;
  quit = false;

  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "get_desktop_settings":
        return () => this.settings;
      case "set_keep_running":
        return () => (this.settings = { ...this.settings, keep_running: args.on as boolean });
      case "set_start_at_login":
        return () => (this.settings = { ...this.settings, start_at_login: args.on as boolean });
      case "remember_view":
        return () => {
          this.remembered = args.view as SavedView;
          return null;
        };
      case "restored_view":
        return () => {
          const view = this.restore;
          this.restore = null;
          return view;
        };
      case "quit_app":
        return () => {
          this.quit = true;
          return null;
        };
      default:
        return undefined;
    }
  }
}
