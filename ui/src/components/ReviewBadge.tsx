import { StatusBadge } from "./StatusBadge";

/** Why a workflow is flagged, in the words its tooltip and the workflow page use. */
export const REVIEW_EXPLANATION =
  "Healer had to repair this script many times lately. The repairs work, but something keeps changing under it.";

/** What ends the flag (the engine clears it when the person saves the script). */
export const REVIEW_CLEARS = "The flag goes away when you next save the script yourself.";

/** Shown while a workflow is flagged for review: fixed too often lately for Healer to go on alone. */
export function ReviewBadge() {
  return (
    <StatusBadge tone="working" label="Needs review" title={`${REVIEW_EXPLANATION} ${REVIEW_CLEARS}`} testId="review-badge" />
  );
}
