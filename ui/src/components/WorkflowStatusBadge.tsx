import type { WorkflowStatus } from "../bindings";
import { workflowStatusLabel, workflowStatusTone } from "../workflowText";
import { StatusBadge } from "./StatusBadge";

/** A workflow's status; while an auto-fix repairs it, "Healing" says so instead. */
export function WorkflowStatusBadge({ status, healing }: { status: WorkflowStatus; healing: boolean }) {
  if (healing) {
    return <StatusBadge tone="info" label="Healing" title="Healer is repairing its script" live />;
  }
  return <StatusBadge tone={workflowStatusTone[status]} label={workflowStatusLabel[status]} />;
}
