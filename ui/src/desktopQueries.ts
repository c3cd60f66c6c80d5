import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";
import type { DesktopSettings } from "./bindings";

export const desktopKeys = { settings: ["desktop-settings"] } as const;

/** Whether closing the window keeps Healer in the tray, and whether it starts at login. */
export function useDesktopSettings() {
  return useQuery({ queryKey: desktopKeys.settings, queryFn: api.getDesktopSettings });
}

export type DesktopChange = { setting: "keep_running" | "start_at_login"; on: boolean };

export function useSetDesktopSetting() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ setting, on }: DesktopChange) =>
      setting === "keep_running" ? api.setKeepRunning(on) : api.setStartAtLogin(on),
    onSuccess: (settings: DesktopSettings) => queryClient.setQueryData(desktopKeys.settings, settings),
  });
}

/** Quits Healer: schedules stop until it is started again. */
export function useQuitApp() {
  return useMutation({ mutationFn: api.quitApp });
}
