import { screen, waitFor } from "@testing-library/react";
import { expect } from "vitest";

/** The dialog (showing checkpoint `id`, if given) once it takes keys: it ignores them for a moment after it appears. */
export async function readyDialog(id?: number) {
  await waitFor(
    () => {
      const dialog = screen.getByTestId("checkpoint-dialog");
      if (id !== undefined) expect(dialog).toHaveAttribute("data-checkpoint-id", String(id));
      expect(dialog).toHaveAttribute("data-ready", "true");
    },
    { timeout: 3000 },
  );
  return screen.getByTestId("checkpoint-dialog");
}
