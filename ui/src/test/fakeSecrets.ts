// The fake engine's secret keeping (src/secrets/keep.rs, src/workflow/secrets.rs): a keyring
// service that may be missing, Healer's own file once chosen, and workflows' secrets by name.
import type { KeepStatus, KeptIn, WorkflowSecret } from "../bindings";

const FILE_PROTECTS =
  "Healer keeps the values in a file in its data folder that only your user can open, sealed with a key kept beside it.";

export class FakeSecrets {
  /** Whether a keyring service answers on this fake computer. */
  keyringService = true;
  fileChosen = false;
  /** Every value kept, by account (the test looks at them; the window never gets them back). */
  values = new Map<string, string>();
  private secrets = new Map<number, WorkflowSecret[]>();

  place(): KeptIn | null {
    if (this.keyringService) return "keyring";
    return this.fileChosen ? "file" : null;
  }

  status(): KeepStatus {
    return { keyring: this.keyringService, file: this.fileChosen, newValuesGoTo: this.place(), fileProtects: FILE_PROTECTS };
  }

  /** Keeps `value`, or throws what the engine says where there is no place. */
  keep(account: string, value: string): KeptIn {
    const place = this.place();
    if (!place) {
      throw {
        code: "no_keyring",
        message:
          "this computer has no keyring service, so the key cannot be kept there: keep it in Healer's own secrets file (Settings → Models), or put it in the provider's environment variable and restart Healer",
      };
    }
    this.values.set(account, value);
    return place;
  }

  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "keep_status":
        return () => this.status();
      case "choose_secrets_file":
        return () => {
          this.fileChosen = true;
          return this.status();
        };
      case "list_workflow_secrets":
        return () => this.secrets.get(args.workflowId as number) ?? [];
      case "set_workflow_secret":
        return () => {
          const id = args.workflowId as number;
          const name = (args.name as string).trim();
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
            throw { code: "invalid_input", message: `"${name}" cannot be a variable name` };
          }
          const kept_in = this.keep(`workflow:${id}:${name}`, args.value as string);
          const saved: WorkflowSecret = { name, kept_in, saved_at: new Date().toISOString() };
          this.secrets.set(id, [...(this.secrets.get(id) ?? []).filter((s) => s.name !== name), saved]);
          return saved;
        };
      case "remove_workflow_secret":
        return () => {
          const id = args.workflowId as number;
          this.secrets.set(
            id,
            (this.secrets.get(id) ?? []).filter((s) => s.name !== args.name),
          );
          this.values.delete(`workflow:${id}:${String(args.name)}`);
          return null;
        };
      default:
        return undefined;
    }
  }
}
