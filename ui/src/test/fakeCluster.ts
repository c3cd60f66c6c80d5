// The fake engine's cluster (src/cluster): a connection that answers or not, the workers each
// queue has, where each workflow runs, and the runs stopped.
import type { ClusterSettings, ClusterStatus, QueueWorkers, RunsOn, WorkerGateway } from "../bindings";

export class FakeCluster {
  /** The cluster at any address answers (false: it cannot be reached). */
  answers = true;
  settings: ClusterSettings | null = null;
  /** The workers polling each queue. */
  workers = new Map<string, string[]>();
  /** How long ago a worker last asked for work, in ms (default: a few seconds). */
  silentFor = new Map<string, number>();
  placement = new Map<number, string>();
  stopped: number[] = [];
  keyExports = 0;
  /** Where workers reach the model gateway, and the workers with a token. */
  gateway: WorkerGateway = { listen: null, workers: [] };
  /** What the save dialog returns for the key (null: the person closed it). */
  keySaveAs: string | null = "/home/you/Documents/healer-cluster.key";

  /** `keyPlace`: whether the computer has a place for the cluster key (a keyring, or the file). */
  constructor(private keyPlace: () => boolean = () => true) {}

  private unreachable(address: string) {
    return { code: "cluster", message: `the cluster at ${address} could not be reached: Connection refused` };
  }

  queue(name: string): QueueWorkers {
    const seen = (w: string) => new Date(Date.now() - (this.silentFor.get(w) ?? 3_000)).toISOString();
    return { queue: name, workers: (this.workers.get(name) ?? []).map((w) => ({ name: w, last_seen: seen(w) })) };
  }

  status(): ClusterStatus {
    const settings = this.settings;
    const base = { settings, reachable: false, problem: null, queues: [], workflows_on_cluster: this.placement.size };
    if (!settings) return base;
    if (!this.answers) return { ...base, problem: this.unreachable(settings.address).message };
    const queues = [settings.queue, ...this.placement.values()].filter((q, i, all) => all.indexOf(q) === i);
    return { ...base, reachable: true, queues: queues.map((q) => this.queue(q)) };
  }

  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "worker_gateway":
        return () => this.gateway;
      case "open_gateway_to_workers":
        return () => {
          const listen = String(args.listen);
          if (!/^\d+\.\d+\.\d+\.\d+:\d+$/.test(listen)) {
            throw { code: "invalid_input", message: `“${listen}” is not an address to listen on: give an IP address and a port, such as 0.0.0.0:7480` };
          }
          this.gateway = { ...this.gateway, listen };
          return this.gateway;
        };
      case "make_worker_token":
        return () => {
          const name = String(args.name);
          const made = { name, token_sha256: "f".repeat(64), made_at: new Date().toISOString() };
          this.gateway = { ...this.gateway, workers: [...this.gateway.workers.filter((w) => w.name !== name), made] };
          return `healer-worker-${"ab".repeat(32)}`;
        };
      case "forget_worker_token":
        return () => {
          this.gateway = { ...this.gateway, workers: this.gateway.workers.filter((w) => w.name !== args.name) };
          return this.gateway;
        };
      case "cluster_status":
        return () => this.status();
      case "test_cluster":
        return () => {
          const settings = args.settings as ClusterSettings;
          if (!this.answers) throw this.unreachable(settings.address);
          return this.queue(settings.queue);
        };
      case "connect_cluster":
        return () => {
          const settings = args.settings as ClusterSettings;
          if (!/^[^:\s]+:\d+$/.test(settings.address.trim())) {
            throw { code: "invalid_input", message: `“${settings.address}” is not an address Healer can use: write it as host:port, like 127.0.0.1:7233` };
          }
          if (!this.answers) throw this.unreachable(settings.address);
          // As the engine: the address is tried first, then the key is made and kept.
          if (!this.keyPlace()) {
            throw {
              code: "no_keyring",
              message:
                "this computer has no keyring service, so Healer cannot keep the secret there: choose to keep secrets in Healer's own secrets file",
            };
          }
          this.settings = { ...settings, address: settings.address.trim() };
          return this.status();
        };
      case "disconnect_cluster":
        return () => {
          const back = [...this.placement.keys()].map((id) => `Workflow ${id}`);
          this.placement.clear();
          this.settings = null;
          return back;
        };
      case "get_runs_on":
        return () => this.runsOn(args.workflowId as number);
      case "set_runs_on":
        return () => {
          const id = args.workflowId as number;
          const wanted = args.runsOn as RunsOn;
          if (wanted.kind === "local") {
            this.placement.delete(id);
          } else {
            if (!this.settings) {
              throw {
                code: "cluster",
                message: "“this workflow” cannot run on the cluster: this Healer is not connected to one. Connect it first in Settings → More computers",
              };
            }
            this.placement.set(id, wanted.queue.trim() || this.settings.queue);
          }
          return this.runsOn(id);
        };
      case "stop_run":
        return () => {
          this.stopped.push(args.runId as number);
          return null;
        };
      case "plugin:dialog|save":
        return () => this.keySaveAs;
      case "export_cluster_key":
        return () => {
          this.keyExports += 1;
          return (args.path as string | null) ?? "/home/you/Downloads/healer-cluster.key";
        };
      default:
        return undefined;
    }
  }

  runsOn(id: number): RunsOn {
    const queue = this.placement.get(id);
    return queue ? { kind: "cluster", queue } : { kind: "local" };
  }
}
