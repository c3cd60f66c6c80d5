import "@testing-library/jest-dom/vitest";
import { clearMocks } from "@tauri-apps/api/mocks";
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";
import { decideNow } from "../postponed";
import { clearToasts } from "../toasts";
import { setLeaveGuard } from "../usePage";

// jsdom does no layout. CodeMirror measures text through Range rectangles, which jsdom lacks;
// empty ones are what an unlaid-out page would give.
function noRects(): DOMRectList {
  const list = [] as unknown as DOMRectList & DOMRect[];
  Object.defineProperty(list, "item", { value: () => null });
  return list;
}
if (!Range.prototype.getClientRects) {
  Range.prototype.getClientRects = noRects;
  Range.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
}

afterEach(() => {
  cleanup();
  clearMocks();
  // Module-wide state a test may leave behind: what was said, put off, or guarded.
  clearToasts();
  decideNow();
  setLeaveGuard(null);
  window.location.hash = "";
});
